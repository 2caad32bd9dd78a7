import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startPgBouncer, type PgBouncer } from '../../bench/support/pgbouncer.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL URL with the right to create databases, or null when none is reachable. */
    postgresAdminUrl: string | null;
    /**
     * With TEST_POSTGRES_VIA_PGBOUNCER=true, a PgBouncer (transaction pooling)
     * in front of that server, which the service under test is given; else null.
     */
    pgbouncerUrl: string | null;
    /** A Redis URL, or null when none is reachable. */
    redisUrl: string | null;
  }
}

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function redisReachable(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * Finds the PostgreSQL server for the PostgreSQL half of the suites. Outside
 * CI those suites are skipped when there is none; in CI (CI=true) its absence
 * fails the run, so that a green CI always means both databases passed. The
 * same holds for the PgBouncer that TEST_POSTGRES_VIA_PGBOUNCER=true asks for.
 * TEST_SQLITE_ONLY=true (npm run test:quick) asks for no PostgreSQL at all:
 * the suites run on SQLite only, also where a server is reachable or CI=true.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  const sqliteOnly = process.env.TEST_SQLITE_ONLY === 'true';
  if (sqliteOnly && process.env.TEST_POSTGRES_VIA_PGBOUNCER === 'true') {
    throw new Error(
      'TEST_SQLITE_ONLY=true and TEST_POSTGRES_VIA_PGBOUNCER=true exclude each other',
    );
  }
  const url = process.env.TEST_POSTGRES_URL ?? DEFAULT_URL;
  const ok = !sqliteOnly && (await reachable(url));
  if (!ok && !sqliteOnly && process.env.CI === 'true') {
    throw new Error(`CI=true but PostgreSQL is not reachable at ${url} (set TEST_POSTGRES_URL)`);
  }
  if (sqliteOnly) {
    console.log('TEST_SQLITE_ONLY=true: the PostgreSQL suites are skipped.');
  } else if (!ok) {
    console.warn(
      `PostgreSQL is not reachable at ${url}: the PostgreSQL suites are skipped. ` +
        'Start one (or set TEST_POSTGRES_URL) to run them.',
    );
  }

  const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redisOk = await redisReachable(redisUrl);
  if (!redisOk && process.env.CI === 'true') {
    throw new Error(`CI=true but Redis is not reachable at ${redisUrl} (set TEST_REDIS_URL)`);
  }
  if (!redisOk)
    console.warn(`Redis is not reachable at ${redisUrl}: the shared rate-limit test is skipped.`);
  project.provide('redisUrl', redisOk ? redisUrl : null);

  let pgbouncer: PgBouncer | null = null;
  const viaPgBouncer = process.env.TEST_POSTGRES_VIA_PGBOUNCER === 'true';
  if (ok && viaPgBouncer) {
    try {
      pgbouncer = await startPgBouncer(url, { report: true });
      console.log(`The service reaches PostgreSQL through PgBouncer at ${pgbouncer.url}`);
    } catch (error) {
      const why = `TEST_POSTGRES_VIA_PGBOUNCER=true but PgBouncer did not start: ${(error as Error).message}`;
      if (process.env.CI === 'true') throw new Error(`CI=true and ${why}`);
      console.warn(`${why}\nThe PostgreSQL suites are skipped.`);
    }
  }
  // Without the PgBouncer asked for, the PostgreSQL suites would pass on a direct connection: skip them.
  project.provide('postgresAdminUrl', ok && (!viaPgBouncer || pgbouncer) ? url : null);
  project.provide('pgbouncerUrl', pgbouncer?.url ?? null);
  return pgbouncer?.stop;
}
