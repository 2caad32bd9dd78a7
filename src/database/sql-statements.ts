import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Statement as SqliteStatement } from 'better-sqlite3';
import { DataSource } from 'typeorm';
import { postgresPool, sqliteConnection } from './driver-handles.js';

type SqlValue = string | number | bigint | null;

/** One hand-written SQL statement, prepared once and run many times. */
export interface Statement<Row> {
  /** The rows of a query. */
  all(params: readonly SqlValue[]): Promise<Row[]>;
  /** How many rows an INSERT, UPDATE or DELETE changed. */
  run(params: readonly SqlValue[]): Promise<number>;
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
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

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
    return {
      all: async (params) => statement().all(...params) as Row[],
      run: async (params) => statement().run(...params).changes,
    };
  }

  private postgres<Row>(name: string, sql: string): Statement<Row> {
    let placeholder = 0;
    const text = sql.replace(/\?/g, () => `$${++placeholder}`);
    const query = (params: readonly SqlValue[]) =>
      postgresPool(this.dataSource).query({
        name,
        text,
        values: params.map((value) => (typeof value === 'bigint' ? value.toString() : value)),
      });
    return {
      all: async (params) => (await query(params)).rows as Row[],
      run: async (params) => (await query(params)).rowCount ?? 0,
    };
  }
}
