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
