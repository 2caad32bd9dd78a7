import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataSourceOptions } from '../src/database/data-source-options.js';
import { Transactions } from '../src/database/transactions.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';

const settings = { DB_POOL_SIZE: 2, DB_CONNECT_TIMEOUT_MS: 2000, DB_STATEMENT_TIMEOUT_MS: 2000 };

/** On SQLite the same is pinned by src/database/transactions.spec.ts. */
describe.skipIf(!databaseKinds().includes('postgres'))('unsynced commits on PostgreSQL', () => {
  let database: TestDatabase;
  let dataSource: DataSource;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    dataSource = await new DataSource(
      dataSourceOptions({ ...settings, DATABASE_URL: database.url }),
    ).initialize();
  });
  afterAll(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  const setting = async (query: (sql: string) => Promise<{ synchronous_commit: string }[]>) =>
    (await query('SHOW synchronous_commit'))[0].synchronous_commit;

  it('turns synchronous_commit off for that transaction only', async () => {
    const transactions = new Transactions(dataSource);
    const during = await transactions.runUnsynced((manager) =>
      setting((sql) => manager.query(sql)),
    );
    expect(during).toBe('off');
    const [afterwards, inAnother] = await Promise.all([
      setting((sql) => dataSource.query(sql)),
      transactions.run((manager) => setting((sql) => manager.query(sql))),
    ]);
    expect([afterwards, inAnother]).toEqual(['on', 'on']);
  });
});
