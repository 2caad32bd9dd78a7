import { type DataSource, MigrationExecutor } from 'typeorm';

/** Arbitrary, fixed key of the PostgreSQL advisory lock that serialises migrations. */
export const MIGRATION_LOCK_KEY = 4_242_001;

/**
 * Runs pending migrations, all in one transaction. On PostgreSQL several
 * instances may start at once: the first takes a transaction-scoped advisory
 * lock and migrates, the others wait on it, then find nothing left to do. The
 * lock lives and dies with that transaction, so it holds behind PgBouncer in
 * transaction mode too (a session lock would be taken on one server
 * connection and released on another).
 */
export async function runMigrations(dataSource: DataSource): Promise<void> {
  if (dataSource.options.type !== 'postgres') {
    await dataSource.runMigrations({ transaction: 'all' });
    return;
  }
  const queryRunner = dataSource.createQueryRunner();
  try {
    await queryRunner.startTransaction();
    await queryRunner.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    const executor = new MigrationExecutor(dataSource, queryRunner);
    // This transaction is the migrations' own.
    executor.transaction = 'none';
    await executor.executePendingMigrations();
    await queryRunner.commitTransaction();
  } catch (error) {
    if (queryRunner.isTransactionActive) await queryRunner.rollbackTransaction();
    throw error;
  } finally {
    await queryRunner.release();
  }
}

/**
 * For an instance that does not migrate (DB_MIGRATE_ON_START=false): refuses
 * to start while a migration of this code is pending, naming it. A schema
 * ahead of the code (migrations this version does not know, run by a newer
 * version's job during a rolling upgrade) is fine: migrations expand first and
 * contract in a later release, so an older instance keeps working on it.
 */
export async function assertSchemaCurrent(dataSource: DataSource): Promise<void> {
  const pending = await new MigrationExecutor(dataSource).getPendingMigrations();
  if (pending.length === 0) return;
  const names = pending.map((migration) => migration.name).join(', ');
  throw new SchemaBehindError(
    `The database schema is behind this version: pending migration ${names}. ` +
      'Run the migrations job first (npm run migration:run; in the container: node dist/migrate.main.js), ' +
      'or set DB_MIGRATE_ON_START=true.',
  );
}

/** The schema lacks a migration of this code: not worth retrying until the job has run. */
export class SchemaBehindError extends Error {}
