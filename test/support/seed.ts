import pg from 'pg';
import { loadBetterSqlite3 } from '../../src/database/better-sqlite3.js';
import type { TestDatabase } from './test-database.js';

type Dialect = 'sqlite' | 'postgres';

/**
 * Runs one statement on a test database behind the service's back, in that
 * database's dialect: to seed big data fast, or to break the service on purpose.
 */
export async function runSql(
  database: TestDatabase,
  statements: Record<Dialect, [sql: string, params?: unknown[]]>,
): Promise<void> {
  const [sql, params = []] = statements[database.kind];
  if (database.kind === 'sqlite') {
    const db = new (loadBetterSqlite3())(database.url.slice('sqlite:'.length));
    try {
      db.prepare(sql).run(...params);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: database.directUrl });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** Inserts plants 1..count for an owner straight into the database: fast set-up for big lists. */
export function seedPlants(database: TestDatabase, owner: string, count: number): Promise<void> {
  return runSql(database, {
    sqlite: [
      `INSERT INTO plants (owner, id, name, tag)
       WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < ?)
       SELECT ?, x, 'plant ' || x, NULL FROM seq`,
      [count, owner],
    ],
    postgres: [
      `INSERT INTO plants (owner, id, name, tag)
       SELECT $1, x, 'plant ' || x, NULL FROM generate_series(1, $2::int) AS x`,
      [owner, count],
    ],
  });
}
