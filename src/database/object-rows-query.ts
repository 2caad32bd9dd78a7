import pg from 'pg';

/** A column's type parser, as node-postgres keeps them. */
type Parse = (value: string | Buffer) => unknown;

/** Builds one row object from its parsed values, in column order. */
type Build = (values: unknown[]) => Record<string, unknown>;

/** What the rows' type parsers come from: the client that runs the query. */
export interface TypeParsers {
  getTypeParser(oid: number, format: 'text' | 'binary'): Parse;
}

/** A DataRow or RowDescription message of pg-protocol, as the client hands it to its query. */
interface DataRow {
  fields: Array<string | Buffer | null>;
}
interface RowDescription {
  fields: pg.FieldDef[];
}

/** One builder per shape of row (its columns' names, in order); more shapes than the service has. */
const builders = new Map<string, Build>();
const MAX_BUILDERS = 256;

/**
 * An object literal with the columns' names as its keys, made once per shape:
 * each shape's rows are built at a site of their own, whatever other shapes
 * the process reads. Duplicate names keep the first one's place and the last
 * one's value, as node-postgres's rows do; "__proto__" is written as a
 * computed key, which makes an own property (a plain one would set the
 * prototype), as node-postgres's rows have it.
 */
function literalBuilder(names: readonly string[]): Build {
  const properties = names.map((name, i) => {
    const key = JSON.stringify(name);
    return `${name === '__proto__' ? `[${key}]` : key}: values[${i}]`;
  });
  // The names are the database's column names, each written as a JSON string literal.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('values', `return { ${properties.join(', ')} };`) as Build;
}

/** Past MAX_BUILDERS shapes (SQL made up at run time): a row built key by key. */
function genericBuilder(names: readonly string[]): Build {
  return (values) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      Object.defineProperty(row, names[i], {
        value: values[i],
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    return row;
  };
}

function builderFor(fields: readonly pg.FieldDef[]): Build {
  let key = '';
  for (const field of fields) key += `${field.name}\u0000`;
  let build = builders.get(key);
  if (build) return build;
  const names = fields.map((field) => field.name);
  if (builders.size >= MAX_BUILDERS) return genericBuilder(names);
  build = literalBuilder(names);
  builders.set(key, build);
  return build;
}

/** The rows of one statement, as its row messages come. */
class StatementRows {
  private parsers: Parse[] = [];
  private binary: boolean[] = [];
  private build: Build | undefined;
  private fields: pg.FieldDef[] = [];
  private readonly rows: Array<Record<string, unknown>> = [];
  private failure: Error | undefined;

  constructor(private readonly types: TypeParsers) {}

  described(fields: pg.FieldDef[]): void {
    if (this.build) {
      this.failure = new Error('an ObjectRowsQuery runs one statement');
      return;
    }
    this.fields = fields;
    this.build = builderFor(fields);
    this.parsers = fields.map((field) =>
      this.types.getTypeParser(field.dataTypeID, field.format === 'binary' ? 'binary' : 'text'),
    );
    this.binary = fields.map((field) => field.format === 'binary');
  }

  add(values: DataRow['fields']): void {
    if (this.failure || !this.build) return;
    const parsed: unknown[] = new Array(values.length);
    try {
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        parsed[i] =
          value === null
            ? null
            : this.parsers[i](this.binary[i] ? Buffer.from(value as Buffer) : value);
      }
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      return;
    }
    this.rows.push(this.build(parsed));
  }

  /** node-postgres's Result with these rows and fields, or the failure of a type parser. */
  ended(result: pg.QueryResult): pg.QueryResult | Error {
    if (this.failure) return this.failure;
    result.rows = this.rows;
    result.fields = this.fields;
    return result;
  }
}

/**
 * node-postgres's Query for one statement with parameters (the extended
 * protocol: one statement, one set of rows), whose rows are built by
 * `builderFor` instead of node-postgres's Result (pg 8.23).
 *
 * Why: the Result builds every row by spreading an empty row of the
 * statement's shape (`{ ...this._prebuiltEmptyResultObject }`), one spread
 * for all the statements of the process. Past four shapes of row (the
 * service reads more at start-up alone: its migrations' bookkeeping, the
 * check for writes, the token lookup, its lists) V8 gives up on that spread
 * and copies each row property by property, and each statement's empty row is
 * itself copied from a dictionary: with this query a list of 20 plants takes
 * 6 % fewer instructions, 632,000 against 675,500 (BENCHMARKS.md,
 * "Instructions per request").
 *
 * The query keeps node-postgres's protocol, its Result for the command and the
 * row count, its type parsers (the client's), its read timeout and its error
 * handling: only the two handlers of row messages (the Submittable interface
 * that pg-cursor also implements) are its own, and the rows and fields are
 * given to the Result before the callback sees it. A type parser that throws
 * fails the query with its error once the statement has ended, as
 * node-postgres does.
 */
export class ObjectRowsQuery extends pg.Query {
  // A field of its own (#): node-postgres's Query already has `rows`, `types`, `binary`...
  readonly #rows: StatementRows;

  constructor(
    text: string,
    values: readonly unknown[],
    types: TypeParsers,
    callback: (error: Error | undefined, result?: pg.QueryResult) => void,
  ) {
    const rows = new StatementRows(types);
    super(text, values, (error, result) => {
      if (error) return callback(error);
      const ended = rows.ended(result);
      if (ended instanceof Error) callback(ended);
      else callback(undefined, ended);
    });
    this.#rows = rows;
  }

  /** A RowDescription: the statement's columns. */
  handleRowDescription({ fields }: RowDescription): void {
    this.#rows.described(fields);
  }

  /** A DataRow: one row's values, parsed and built into an object. */
  handleDataRow({ fields }: DataRow): void {
    this.#rows.add(fields);
  }
}
