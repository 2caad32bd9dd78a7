import type { DataSource } from 'typeorm';

/** Arbitrary, fixed key of the PostgreSQL advisory lock that serialises migrations. */
export const MIGRATION_LOCK_KEY = 4_242_001;

/**
 * Runs pending migrations, all in one transaction. On PostgreSQL several
 * instances may start at once: an advisory lock lets one migrate while the
 * others wait, then find nothing left to do.
 */
export async function runMigrations(dataSource: DataSource): Promise<void> {
  if (dataSource.options.type !== 'postgres') {
    await dataSource.runMigrations({ transaction: 'all' });
    return;
  }
  const lockHolder = dataSource.createQueryRunner();
  await lockHolder.connect();
  try {
    await lockHolder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await dataSource.runMigrations({ transaction: 'all' });
  } finally {
    await lockHolder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    await lockHolder.release();
  }
}
