import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { loadEnvironment } from './environment.js';
import { initializeOrExplain } from './database/initialize-or-explain.js';
import { dataSourceOptions } from './database/data-source-options.js';
import { runMigrations } from './database/run-migrations.js';
import { PinoNestLogger } from './logging/pino-nest.logger.js';
import { createRootLogger } from './logging/root-logger.js';
import { logStartupFailure } from './logging/startup-failure.js';

/**
 * The migrations job: `npm run migration:run`, and in the container
 * `node dist/migrate.main.js` (the Helm chart runs it before an install or
 * upgrade, with DB_MIGRATE_ON_START=false on the service). Runs the pending
 * migrations under the same lock as a migrating instance and exits 0.
 */
async function migrate(): Promise<void> {
  const env = loadEnvironment();
  const rootLogger = createRootLogger(env.LOG_LEVEL, env.NODE_ENV);
  Logger.overrideLogger(new PinoNestLogger(rootLogger));
  const dataSource = await initializeOrExplain(new DataSource(dataSourceOptions(env)));
  try {
    await runMigrations(dataSource);
    new Logger('Migrations').log('the schema is up to date');
  } finally {
    await dataSource.destroy();
    rootLogger.flush();
  }
}

migrate().catch((error: unknown) => {
  logStartupFailure(error);
  process.exit(1);
});
