import { basename } from 'node:path';
import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  InstrumentationBase,
  type InstrumentationConfig,
  InstrumentationNodeModuleDefinition,
  isWrapped,
} from '@opentelemetry/instrumentation';
import {
  ATTR_DB_NAMESPACE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_QUERY_TEXT,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
} from '@opentelemetry/semantic-conventions';

/** The statement methods that run SQL; `iterate` is left out (nothing here uses it). */
const STATEMENT_METHODS = ['run', 'get', 'all'] as const;

// Both installed majors (see src/database/better-sqlite3.ts): 12 as itself, 13 under an alias.
const MODULE_NAMES = ['better-sqlite3', 'better-sqlite3-napi'];
const SUPPORTED_VERSIONS = ['>=11 <14'];

type StatementMethod = (this: Statement, ...params: unknown[]) => unknown;

/** What is used here of better-sqlite3's Statement and Database, in every supported version. */
type Statement = { readonly source: string; readonly database: { readonly name: string } } & Record<
  (typeof STATEMENT_METHODS)[number],
  StatementMethod
>;
interface Database {
  prepare: (this: Database, source: string) => Statement;
}
interface DatabaseConstructor {
  prototype: Database;
}

export interface BetterSqlite3InstrumentationConfig extends InstrumentationConfig {
  /** Only trace SQL run inside a trace (a request), not start-up migrations. */
  requireParentSpan?: boolean;
}

/**
 * A client span per SQL statement on SQLite, which OpenTelemetry has no
 * instrumentation for; the PostgreSQL side is @opentelemetry/instrumentation-pg.
 * Attributes follow the stable database semantic conventions, as
 * instrumentation-pg's do: the statement's text with its `?` placeholders,
 * never the bound values (a token's hash, a plant's name).
 *
 * better-sqlite3 is synchronous, so a span is exactly the statement's time.
 * Its Statement class is native and not exported: the prototype is wrapped
 * when the first statement is prepared.
 */
export class BetterSqlite3Instrumentation extends InstrumentationBase<BetterSqlite3InstrumentationConfig> {
  constructor(config: BetterSqlite3InstrumentationConfig = {}) {
    super('plant-store-better-sqlite3', '1.0.0', config);
  }

  protected init(): InstrumentationNodeModuleDefinition[] {
    return MODULE_NAMES.map(
      (name) =>
        new InstrumentationNodeModuleDefinition(
          name,
          SUPPORTED_VERSIONS,
          (exports: DatabaseConstructor) => {
            this.patchDatabase(exports.prototype);
            return exports;
          },
          (exports?: DatabaseConstructor) => {
            if (exports) this._unwrap(exports.prototype, 'prepare');
          },
        ),
    );
  }

  private patchDatabase(database: Database): void {
    if (isWrapped(database.prepare)) this._unwrap(database, 'prepare');
    const patchStatement = (statement: Statement) =>
      this.patchStatement(Object.getPrototypeOf(statement) as Statement);
    this._wrap(
      database,
      'prepare',
      (original: Database['prepare']) =>
        function prepare(this: Database, source: string): Statement {
          const statement = original.call(this, source);
          patchStatement(statement);
          return statement;
        },
    );
  }

  private patchStatement(prototype: Statement): void {
    for (const method of STATEMENT_METHODS) {
      if (isWrapped(prototype[method])) continue;
      this._wrap(prototype, method, (original: StatementMethod) => this.traced(original));
    }
  }

  private traced(original: StatementMethod): StatementMethod {
    const untraced = () =>
      this.getConfig().requireParentSpan === true && trace.getSpan(context.active()) === undefined;
    const startSpan = (statement: Statement) => this.startSpan(statement);
    return function traced(this: Statement, ...params: unknown[]): unknown {
      if (untraced()) return original.apply(this, params);
      const span = startSpan(this);
      try {
        return original.apply(this, params);
      } catch (error) {
        recordError(span, error);
        throw error;
      } finally {
        span.end();
      }
    };
  }

  private startSpan(statement: Statement): Span {
    const operation = /^\s*(\w+)/.exec(statement.source)?.[1]?.toUpperCase();
    const namespace = basename(statement.database.name);
    return this.tracer.startSpan(operation ? `${operation} ${namespace}` : namespace, {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR_DB_SYSTEM_NAME]: 'sqlite',
        [ATTR_DB_NAMESPACE]: namespace,
        [ATTR_DB_QUERY_TEXT]: statement.source,
        ...(operation ? { [ATTR_DB_OPERATION_NAME]: operation } : {}),
      },
    });
  }
}

function recordError(span: Span, error: unknown): void {
  if (error instanceof Error) {
    span.recordException(error);
    span.setAttribute(ATTR_ERROR_TYPE, (error as { code?: string }).code ?? error.name);
  }
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}
