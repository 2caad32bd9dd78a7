import { DataSource } from 'typeorm';
import { describe, expect, inject, it } from 'vitest';
import { dataSourceOptions } from './data-source-options.js';
import { PoolGauges } from './pool-gauges.js';

const settings = { DB_POOL_SIZE: 2, DB_CONNECT_TIMEOUT_MS: 2000, DB_STATEMENT_TIMEOUT_MS: 2000 };

/** Pins the TypeORM field pool-gauges.ts reads: an upgrade that moves it fails here. */
describe('PoolGauges', () => {
  it('has no figures on SQLite', async () => {
    const dataSource = await new DataSource(
      dataSourceOptions({ ...settings, DATABASE_URL: 'sqlite::memory:' }),
    ).initialize();
    try {
      expect(new PoolGauges(dataSource).figures()).toBeUndefined();
    } finally {
      await dataSource.destroy();
    }
  });

  it.skipIf(!inject('postgresAdminUrl'))(
    "reads the figures of TypeORM's PostgreSQL pool (needs PostgreSQL)",
    async () => {
      const dataSource = await new DataSource(
        dataSourceOptions({ ...settings, DATABASE_URL: inject('postgresAdminUrl')! }),
      ).initialize();
      try {
        await dataSource.query('SELECT 1');
        const figures = new PoolGauges(dataSource).figures();
        expect(figures?.total).toBeGreaterThanOrEqual(1);
        expect(figures?.idle).toBeGreaterThanOrEqual(1);
        expect(figures?.waiting).toBe(0);
      } finally {
        await dataSource.destroy();
      }
    },
  );
});
