import type { Database } from 'better-sqlite3';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/*
 * The two places where the service reaches past TypeORM's API to the driver
 * object TypeORM opened: the better-sqlite3 connection and the pg pool. TypeORM
 * exposes neither in its typings (`databaseConnection` and `master` are public
 * fields of BetterSqlite3Driver and PostgresDriver in typeorm 1.x). Kept here so
 * that no other file casts TypeORM's internals; driver-handles.spec.ts fails if
 * a TypeORM upgrade moves them.
 */

/** The better-sqlite3 connection of an initialised SQLite DataSource. */
export function sqliteConnection(dataSource: DataSource): Database {
  return (dataSource.driver as unknown as { databaseConnection: Database }).databaseConnection;
}

/** The pg pool of an initialised PostgreSQL DataSource. */
export function postgresPool(dataSource: DataSource): Pool {
  return (dataSource.driver as unknown as { master: Pool }).master;
}
