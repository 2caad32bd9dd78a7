import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import type { DatabaseKind } from '../../src/database/data-source-options.js';

export interface TestDatabase {
  kind: DatabaseKind;
  /** The service's DATABASE_URL: through PgBouncer in the PgBouncer pass (TEST_POSTGRES_VIA_PGBOUNCER). */
  url: string;
  /**
   * Straight to the database, for a test's own work behind the service's back
   * (seeding, locking, inspecting): session state such as an advisory lock
   * does not survive transaction pooling, and the proof is the service's traffic.
   */
  directUrl: string;
  drop(): Promise<void>;
}

/**
 * The databases every e2e suite runs on: SQLite always, PostgreSQL when
 * reachable (always in CI). The PgBouncer pass runs PostgreSQL only: the
 * ordinary pass has covered SQLite.
 */
export function databaseKinds(): DatabaseKind[] {
  if (inject('pgbouncerUrl')) return ['postgres'];
  return inject('postgresAdminUrl') ? ['sqlite', 'postgres'] : ['sqlite'];
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('postgresAdminUrl')! });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A new, empty database of its own for one suite: a temporary SQLite file or a fresh PostgreSQL database. */
export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'plant-store-'));
    const url = `sqlite:${join(dir, 'plants.sqlite')}`;
    return { kind, url, directUrl: url, drop: () => rm(dir, { recursive: true, force: true }) };
  }
  const name = `plant_store_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name} ENCODING 'UTF8' TEMPLATE template0`);
  const named = (base: string) => {
    const url = new URL(base);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const directUrl = named(inject('postgresAdminUrl')!);
  return {
    kind,
    url: named(inject('pgbouncerUrl') ?? directUrl),
    directUrl,
    // Straight to the server; FORCE also ends PgBouncer's server connections to it.
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
