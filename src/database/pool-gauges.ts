import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** How busy the PostgreSQL connection pool is. */
export interface PoolFigures {
  total: number;
  idle: number;
  waiting: number;
}

interface PgPoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * The pool's figures for the metrics endpoint, read (never queried) from the
 * pg pool TypeORM opened: TypeORM has no API for them, and `master` is a
 * public field of its PostgresDriver (typed `any` in typeorm 1.x;
 * pool-gauges.spec.ts fails if an upgrade moves it). The only place that
 * touches a driver object.
 */
@Injectable()
export class PoolGauges {
  /** Whether there is a pool at all (PostgreSQL). */
  readonly pooled: boolean;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.pooled = dataSource.options.type === 'postgres';
  }

  /** undefined on SQLite, and until the DataSource is initialised. */
  figures(): PoolFigures | undefined {
    if (!this.pooled || !this.dataSource.isInitialized) return undefined;
    const pool = (this.dataSource.driver as { master?: PgPoolCounts }).master;
    if (!pool) return undefined;
    return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
  }
}
