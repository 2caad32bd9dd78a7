import pg from 'pg';
import { loadBetterSqlite3 } from '../../src/database/better-sqlite3.js';
import type { TestDatabase } from './test-database.js';

/** Inserts plants 1..count for an owner straight into the database: fast set-up for big lists. */
export async function seedPlants(
  database: TestDatabase,
  owner: string,
  count: number,
): Promise<void> {
  if (database.kind === 'sqlite') {
    const Database = loadBetterSqlite3();
    const db = new Database(database.url.slice('sqlite:'.length));
    try {
      db.prepare(
        `INSERT INTO plants (owner, id, name, tag)
         WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < ?)
         SELECT ?, x, 'plant ' || x, NULL FROM seq`,
      ).run(count, owner);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO plants (owner, id, name, tag)
       SELECT $1, x, 'plant ' || x, NULL FROM generate_series(1, $2::int) AS x`,
      [owner, count],
    );
  } finally {
    await client.end();
  }
}
