import { dirname } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { DataSourceOptions } from 'typeorm';
import type { DatabaseVariables } from './database.variables.js';
import type { FairShareVariables } from './fair-share.variables.js';
import { loadBetterSqlite3 } from './better-sqlite3.js';
import { failoverPostgresDriver, type FailoverPoolOptions } from './failover-pool.js';
import { parsePostgresUrl } from './postgres-url.js';
import { migrations } from './migrations/index.js';
import { TypeOrmNestLogger } from './typeorm-logger.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/**
 * SQLite's commits: with the WAL journal, FULL fsyncs each commit before the
 * answer, so an acknowledged write survives a process crash and a power loss.
 */
export const SQLITE_SYNCHRONOUS = 'FULL';

function databaseKind(url: string): DatabaseKind {
  return url.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

type DatabaseSettings = Pick<
  DatabaseVariables,
  'DATABASE_URL' | 'DB_POOL_SIZE' | 'DB_CONNECT_TIMEOUT_MS' | 'DB_STATEMENT_TIMEOUT_MS'
> &
  Partial<Pick<FairShareVariables, 'FAIR_SHARE_ENABLED'>>;

/**
 * TypeORM options for either database. `synchronize` stays off: the service
 * runs the migrations itself at startup (see run-migrations.ts) so that
 * several instances can start together.
 *
 * No entity is named here: in the app each feature registers its own with
 * TypeOrmModule.forFeature (DatabaseModule loads them), and the migration
 * CLI's data source (src/data-source.ts) passes them in.
 */
export function dataSourceOptions(
  env: DatabaseSettings,
  entities: NonNullable<DataSourceOptions['entities']> = [],
): DataSourceOptions {
  const common = {
    entities,
    migrations,
    synchronize: false,
    migrationsRun: false,
    logger: new TypeOrmNestLogger(),
    logging: true,
    maxQueryExecutionTime: 1000,
  };
  const url = env.DATABASE_URL;
  if (databaseKind(url) === 'sqlite') {
    const database = url.slice('sqlite:'.length);
    if (database !== ':memory:') mkdirSync(dirname(database), { recursive: true });
    return {
      ...common,
      type: 'better-sqlite3',
      driver: loadBetterSqlite3(),
      database,
      enableWAL: true,
      // better-sqlite3's busy timeout: how long a writer waits for another
      // process (the token CLI, a second instance) to release the lock.
      timeout: env.DB_STATEMENT_TIMEOUT_MS,
      prepareDatabase: (db: { pragma(sql: string): unknown }) => {
        db.pragma(`synchronous = ${SQLITE_SYNCHRONOUS}`);
      },
    };
  }
  // A libpq URL may name several hosts; TypeORM and node-postgres know one.
  // TypeORM is given the first host's URL (it reads the database name from
  // it) and FailoverPool the whole list (failover-pool.ts).
  const { hosts } = parsePostgresUrl(url);
  const pool: FailoverPoolOptions = {
    hosts,
    max: env.DB_POOL_SIZE,
    // A connection, once made, stays (a fixed-size pool, as HikariCP's
    // default): pg-pool closes an idle one only above `min`, by a timer it
    // sets at every release and clears at the next checkout, in a timer list
    // of its own that Node makes and drops each time (about 1 % of a list's
    // instructions at 32 connections; BENCHMARKS.md, "Instructions per request").
    // A connection from before a failover is still dropped as it is checked out.
    min: env.DB_POOL_SIZE,
    connectionTimeoutMillis: env.DB_CONNECT_TIMEOUT_MS,
    query_timeout: env.DB_STATEMENT_TIMEOUT_MS,
    fairShare: env.FAIR_SHARE_ENABLED ?? false,
    application_name: 'plant-store',
  };
  return {
    ...common,
    type: 'postgres',
    url: hosts[0].url,
    driver: failoverPostgresDriver,
    // pg returns int8 as a string already; ids never pass through a JS number.
    // Nothing here becomes session state or a startup parameter PgBouncer
    // refuses in transaction mode (it passes application_name through): the
    // timeout is the client's own `query_timeout`, and a server-side
    // statement_timeout belongs to the role or database (docs/DEPLOYMENT.md).
    extra: pool,
  };
}
