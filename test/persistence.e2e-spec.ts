import { migrations } from '../src/database/migrations/index.js';
import { DataSource } from 'typeorm';
import { afterAll, describe, expect, it } from 'vitest';
import { plantsClient } from './support/plants-client.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { startApp } from './support/test-app.js';

describe.each(databaseKinds())('persistence on %s', (kind) => {
  let database: TestDatabase;
  afterAll(async () => database?.drop());

  it('creates the schema with migrations (synchronize off) and keeps plants across a restart', async () => {
    database = await createTestDatabase(kind);
    const first = await startApp(database, { NODE_ENV: 'production' });
    const dataSource = first.app.get(DataSource);
    expect(dataSource.options.synchronize).toBe(false);
    const applied: Array<{ name: string }> = await dataSource.query('SELECT name FROM migrations');
    expect(applied.map((m) => m.name)).toEqual(migrations.map((m) => m.name));
    expect(await dataSource.showMigrations()).toBe(false);
    // Every table the migrations made has an entity, mapped exactly as migrated:
    // TypeORM's schema builder finds nothing to change.
    const tables = dataSource.entityMetadatas.map((entity) => entity.tableName).sort();
    expect(tables).toEqual(['api_tokens', 'plants', 'webhook_deliveries', 'webhook_subscriptions']);
    const pending = await dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);

    const token = await first.tokenFor('keeper');
    const before = plantsClient(first, `Bearer ${token}`);
    await before.create({ id: 2n ** 63n - 1n, name: 'Oak', tag: 'tree' });
    await before.create({ id: -5, name: 'Moss' });
    await first.close();

    const second = await startApp(database, { NODE_ENV: 'production' });
    try {
      const after = plantsClient(second, `Bearer ${token}`);
      expect((await after.list()).body).toEqual([{ name: 'Moss' }, { name: 'Oak', tag: 'tree' }]);
      // The migration is not applied twice.
      const again: Array<{ name: string }> = await second.app
        .get(DataSource)
        .query('SELECT name FROM migrations');
      expect(again).toHaveLength(migrations.length);
      expect((await after.remove(2n ** 63n - 1n)).status).toBe(204);
    } finally {
      await second.close();
    }
  });
});
