import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { DatabaseVariables } from './database.variables.js';
import type { FairShareVariables } from './fair-share.variables.js';
import { DatabaseMisconfiguredError, initializeOrExplain } from './initialize-or-explain.js';
import { dataSourceOptions } from './data-source-options.js';
import { assertSchemaCurrent, runMigrations, SchemaBehindError } from './run-migrations.js';
import { OutboxSignal } from './outbox-signal.js';
import { PoolGauges } from './pool-gauges.js';
import { Transactions } from './transactions.js';

/**
 * The TypeORM connection, migrated before the app takes its first request, and
 * Transactions, how repositories change data on it. Knows no feature: each
 * feature module registers its entities with TypeOrmModule.forFeature and
 * queries them through TypeORM repositories.
 */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<DatabaseVariables & FairShareVariables, true>) => ({
        // Not TypeORM's: taken out again by dataSourceFactory below, which sees only these options.
        migrateOnStart: config.get('DB_MIGRATE_ON_START', { infer: true }),
        ...dataSourceOptions({
          DATABASE_URL: config.get('DATABASE_URL', { infer: true }),
          DB_POOL_SIZE: config.get('DB_POOL_SIZE', { infer: true }),
          DB_CONNECT_TIMEOUT_MS: config.get('DB_CONNECT_TIMEOUT_MS', { infer: true }),
          DB_STATEMENT_TIMEOUT_MS: config.get('DB_STATEMENT_TIMEOUT_MS', { infer: true }),
          FAIR_SHARE_ENABLED: config.get('FAIR_SHARE_ENABLED', { infer: true }),
        }),
        // The entities that feature modules register with TypeOrmModule.forFeature.
        autoLoadEntities: true,
        // A database that cannot be reached yet is tried again; a schema behind,
        // a database that does not exist or a login refused is final, and Nest
        // logs it in one line before the process exits.
        toRetry: (error: unknown) =>
          !(error instanceof SchemaBehindError) && !(error instanceof DatabaseMisconfiguredError),
      }),
      dataSourceFactory: async (options) => {
        const { migrateOnStart, ...dataSourceOptions } = options as typeof options & {
          migrateOnStart: boolean;
        };
        const dataSource = await initializeOrExplain(new DataSource(dataSourceOptions));
        await (migrateOnStart ? runMigrations(dataSource) : assertSchemaCurrent(dataSource));
        return dataSource;
      },
    }),
  ],
  providers: [Transactions, OutboxSignal, PoolGauges],
  exports: [Transactions, OutboxSignal, PoolGauges],
})
export class DatabaseModule {}
