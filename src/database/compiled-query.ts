import type { DataSource, EntityManager, ObjectLiteral, QueryBuilder, QueryResult } from 'typeorm';
import { handOver, RequestScope } from './request-scope.js';

/** Stands for a value while the QueryBuilder writes the SQL, so that its position can be read back. */
class Slot {
  constructor(readonly name: string) {}
}

/**
 * Placeholders for `names`, to give a QueryBuilder as parameters or as the
 * values of an insert (typed `never` so that they fit any column's type).
 */
export function slots<Name extends string>(...names: Name[]): Record<Name, never> {
  return Object.fromEntries(names.map((name) => [name, new Slot(name)])) as Record<Name, never>;
}

/**
 * SQL that a TypeORM QueryBuilder generated once, at start-up, and that runs
 * through TypeORM's `QueryRunner.query()` on every call: TypeORM's public API,
 * without rebuilding and re-escaping the SQL text per request (what that saves
 * on the request path is measured in BENCHMARKS.md, "Data-access styles").
 * better-sqlite3's statements are cached by TypeORM's query runner; on
 * PostgreSQL the query is unnamed (no prepared statement outlives it), so it
 * is safe behind PgBouncer in transaction mode.
 *
 * Build it from a builder whose every value is a slot, e.g.
 * `.where('p.owner = :owner AND p.id = :id', slots('owner', 'id'))`; call it
 * with `{ owner, id }`.
 */
export class CompiledQuery<Name extends string> {
  private constructor(
    readonly sql: string,
    private readonly order: readonly Name[],
  ) {}

  static build<Name extends string>(builder: QueryBuilder<ObjectLiteral>): CompiledQuery<Name> {
    return CompiledQuery.of(...builder.getQueryAndParameters());
  }

  /**
   * Hand-written SQL, for the few statements TypeORM's builders cannot write
   * (the caller says which and why), with `:name` placeholders that the
   * driver turns into its own (`$1` or `?`), as it does for a QueryBuilder.
   */
  static fromSql<Name extends string>(
    dataSource: DataSource,
    sql: string,
    names: readonly Name[],
  ): CompiledQuery<Name> {
    return CompiledQuery.of(...dataSource.driver.escapeQueryWithParameters(sql, slots(...names)));
  }

  private static of<Name extends string>(sql: string, parameters: unknown[]): CompiledQuery<Name> {
    const order = parameters.map((parameter) => {
      if (!(parameter instanceof Slot)) {
        throw new Error(`a compiled query takes every value from a slot: ${sql}`);
      }
      return parameter.name as Name;
    });
    return new CompiledQuery(sql, order);
  }

  /**
   * The rows a SELECT (or a statement with RETURNING) gives. Without a scope,
   * the background's: work outside a request (request-scope.ts). A request
   * passes its own; inside a transaction the scope is never read, the
   * transaction's connection already has one.
   */
  async rows<Row>(
    manager: EntityManager,
    values: Readonly<Record<Name, unknown>>,
    scope = RequestScope.background,
  ): Promise<Row[]> {
    return (await this.run(manager, values, scope)).records as Row[];
  }

  /** How many rows an INSERT, UPDATE or DELETE changed; the scope as for `rows`. */
  async affected(
    manager: EntityManager,
    values: Readonly<Record<Name, unknown>>,
    scope = RequestScope.background,
  ): Promise<number> {
    return (await this.run(manager, values, scope)).affected ?? 0;
  }

  /**
   * On `manager`'s query runner when it has one (a transaction's, whose
   * connection already has its scope), otherwise on one of the DataSource's
   * for this call, as `EntityManager.query()` does, with a connection checked
   * out for `scope` (request-scope.ts); the structured result carries the
   * affected count on both databases.
   */
  private async run(
    manager: EntityManager,
    values: Readonly<Record<Name, unknown>>,
    scope: RequestScope,
  ): Promise<QueryResult> {
    const parameters = this.order.map((name) => values[name]);
    const runner = manager.queryRunner ?? manager.connection.createQueryRunner();
    try {
      return await handOver(scope, () => runner.query(this.sql, parameters, true));
    } finally {
      if (runner !== manager.queryRunner) await runner.release();
    }
  }
}
