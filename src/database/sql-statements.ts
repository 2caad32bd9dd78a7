import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Statement as SqliteStatement } from 'better-sqlite3';
import type { PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { postgresPool, sqliteConnection } from './driver-handles.js';

type SqlValue = string | number | bigint | null;

type Queryable = Pick<PoolClient, 'query'>;

export type SqlDialect = 'sqlite' | 'postgres';

/** One step of a transaction: a statement and its parameters. */
export type TransactionStep = readonly [Statement<unknown>, readonly SqlValue[]];

/** One hand-written SQL statement, prepared once and run many times. */
export interface Statement<Row> {
  /** The rows of a query. */
  all(params: readonly SqlValue[]): Promise<Row[]>;
  /** How many rows an INSERT, UPDATE or DELETE changed; `client`: inside a PostgreSQL transaction. */
  run(params: readonly SqlValue[], client?: Queryable): Promise<number>;
}

/**
 * Runs the few statements of the request hot path (token lookup, list page,
 * insert, find, delete) as prepared statements straight on the connection
 * TypeORM opened: a better-sqlite3 statement prepared once, or a named
 * PostgreSQL statement, parsed and planned once per pooled connection.
 *
 * What it buys: TypeORM's query builder and find options rebuild, escape and
 * re-parse the SQL text and map the result on every call; under load that was
 * the largest share of a request's CPU time (BENCHMARKS.md history).
 * Everything else (migrations, the token CLI, health) stays on TypeORM.
 *
 * SQL is written once with `?` placeholders (SQLite's); PostgreSQL gets
 * `$1..$n`. Bigints are bound as int64 on SQLite and as decimal text on
 * PostgreSQL, so no id passes through a JS number. Errors are the drivers'
 * own (not wrapped in QueryFailedError); database-errors.ts reads both.
 */
@Injectable()
export class SqlStatements {
  /** better-sqlite3 runs a statement synchronously: a transaction must call it so. */
  private readonly sqliteRuns = new WeakMap<
    Statement<unknown>,
    (params: readonly SqlValue[]) => number
  >();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Where a query must differ (e.g. FOR UPDATE SKIP LOCKED), repositories write one per dialect. */
  get dialect(): SqlDialect {
    return this.dataSource.options.type === 'postgres' ? 'postgres' : 'sqlite';
  }

  /**
   * Runs `steps` as one transaction: every change or none. Returns how many
   * rows each step changed. On SQLite the steps run synchronously inside
   * better-sqlite3's transaction (BEGIN IMMEDIATE: a writer takes the lock
   * first rather than failing to upgrade it); nothing else of this process
   * can interleave. On PostgreSQL they run on one pooled connection between
   * BEGIN and COMMIT.
   */
  async transaction(steps: readonly TransactionStep[]): Promise<number[]> {
    if (this.dialect === 'sqlite') {
      const runs = steps.map(
        ([statement, params]) => [this.sqliteRuns.get(statement)!, params] as const,
      );
      return sqliteConnection(this.dataSource)
        .transaction(() => runs.map(([run, params]) => run(params)))
        .immediate();
    }
    const client = await postgresPool(this.dataSource).connect();
    try {
      await client.query('BEGIN');
      const changes: number[] = [];
      for (const [statement, params] of steps) changes.push(await statement.run(params, client));
      await client.query('COMMIT');
      return changes;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** `name` identifies the statement on PostgreSQL connections: one name, one SQL text. */
  prepare<Row>(name: string, sql: string): Statement<Row> {
    return this.dataSource.options.type === 'postgres'
      ? this.postgres<Row>(name, sql)
      : this.sqlite<Row>(sql);
  }

  private sqlite<Row>(sql: string): Statement<Row> {
    let prepared: SqliteStatement | undefined;
    // Prepared on first use: the connection exists once the DataSource is initialised.
    const statement = () => {
      prepared ??= sqliteConnection(this.dataSource).prepare(sql);
      return prepared;
    };
    const run = (params: readonly SqlValue[]) => statement().run(...params).changes;
    const wrapped: Statement<Row> = {
      all: async (params) => statement().all(...params) as Row[],
      run: async (params) => run(params),
    };
    this.sqliteRuns.set(wrapped, run);
    return wrapped;
  }

  private postgres<Row>(name: string, sql: string): Statement<Row> {
    let placeholder = 0;
    const text = sql.replace(/\?/g, () => `$${++placeholder}`);
    const query = (params: readonly SqlValue[], client?: Queryable) =>
      (client ?? postgresPool(this.dataSource)).query({
        name,
        text,
        values: params.map((value) => (typeof value === 'bigint' ? value.toString() : value)),
      });
    return {
      all: async (params) => (await query(params)).rows as Row[],
      run: async (params, client) => (await query(params, client)).rowCount ?? 0,
    };
  }
}
