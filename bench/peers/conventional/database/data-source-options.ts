import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { ApiToken } from '../auth/api-token.entity.js';
import { Plant } from '../plants/plant.entity.js';
import { POSTGRES_POOL } from '../../../reference/store.js';
import { Database } from '../../../support/better-sqlite3.js';
import { settings } from '../settings.js';
import { InitialSchema1732262400000 } from './initial-schema.migration.js';

/** The service's durability settings: SQLite in WAL with synchronous=FULL; its PostgreSQL pool. */
export function dataSourceOptions(): TypeOrmModuleOptions {
  const common = {
    entities: [Plant, ApiToken],
    migrations: [InitialSchema1732262400000],
    migrationsRun: true,
    synchronize: false,
  };
  const url = settings.databaseUrl;
  if (url.startsWith('sqlite:')) {
    return {
      ...common,
      type: 'better-sqlite3',
      driver: Database,
      database: url.slice('sqlite:'.length),
      enableWAL: true,
      // The service's busy timeout: DB_STATEMENT_TIMEOUT_MS, its query_timeout on PostgreSQL.
      timeout: POSTGRES_POOL.query_timeout,
      prepareDatabase: (db: { pragma(sql: string): unknown }) => {
        db.pragma('synchronous = FULL');
      },
    };
  }
  return { ...common, type: 'postgres', url, extra: { max: settings.poolSize, ...POSTGRES_POOL } };
}
