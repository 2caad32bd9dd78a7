import { DataSource } from 'typeorm';
import { describe, expect, inject, it } from 'vitest';
import { dataSourceOptions } from './data-source-options.js';
import { postgresPool, sqliteConnection } from './driver-handles.js';

const settings = { DB_POOL_SIZE: 2, DB_CONNECT_TIMEOUT_MS: 2000, DB_STATEMENT_TIMEOUT_MS: 2000 };

/** Pins the TypeORM internals driver-handles.ts reaches: an upgrade that moves them fails here. */
describe('driver handles', () => {
  it("reach the better-sqlite3 connection of TypeORM's SQLite driver", async () => {
    const dataSource = await new DataSource(
      dataSourceOptions({ ...settings, DATABASE_URL: 'sqlite::memory:' }),
    ).initialize();
    try {
      const row = sqliteConnection(dataSource).prepare('SELECT 41 + 1 AS answer').get();
      expect(row).toEqual({ answer: 42 });
    } finally {
      await dataSource.destroy();
    }
  });

  it.skipIf(!inject('postgresAdminUrl'))(
    "reach the pg pool of TypeORM's PostgreSQL driver",
    async () => {
      const dataSource = await new DataSource(
        dataSourceOptions({ ...settings, DATABASE_URL: inject('postgresAdminUrl')! }),
      ).initialize();
      try {
        const pool = postgresPool(dataSource);
        expect((await pool.query<{ answer: number }>('SELECT 41 + 1 AS answer')).rows).toEqual([
          { answer: 42 },
        ]);
        expect(pool.totalCount).toBeGreaterThanOrEqual(1);
      } finally {
        await dataSource.destroy();
      }
    },
  );
});
