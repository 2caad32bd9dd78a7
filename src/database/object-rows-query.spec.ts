import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ObjectRowsQuery, type TypeParsers } from './object-rows-query.js';

const url = inject('postgresAdminUrl');

describe.skipIf(!url)('ObjectRowsQuery on PostgreSQL (needs PostgreSQL)', () => {
  let client: pg.Client;

  beforeAll(async () => {
    client = new pg.Client({ connectionString: url! });
    await client.connect();
  });

  afterAll(async () => {
    await client.end();
  });

  const run = (text: string, values: unknown[], types: TypeParsers = client) =>
    new Promise<pg.QueryResult>((resolve, reject) => {
      void client.query(
        new ObjectRowsQuery(text, values, types, (error, result) =>
          error ? reject(error) : resolve(result!),
        ),
      );
    });

  /** Each row's own keys in order, its prototype and its values: what node-postgres gives. */
  const described = (rows: Array<Record<string, unknown>>) =>
    rows.map((row) => ({
      keys: Reflect.ownKeys(row),
      prototype: Object.getPrototypeOf(row) as unknown,
      entries: Object.entries(row),
    }));

  it("gives node-postgres's rows, fields, command and row count", async () => {
    const text = `SELECT $1::int AS a, $2::text AS b, NULL::text AS c, 9007199254740993::int8 AS "1",
        true AS a, 'x' AS "__proto__", '2026-01-02 03:04:05.678+00'::timestamptz AS t, '{"k": [1]}'::jsonb AS j, '\\x01ff'::bytea AS bin,
        array[1, 2]::int[] AS list
      FROM generate_series(1, 3) AS n WHERE n <= $3`;
    const values = [7, 'seven', 2];
    const ours = await run(text, values);
    const theirs = await client.query(text, values);
    expect(described(ours.rows)).toEqual(described(theirs.rows));
    expect(ours.rows).toHaveLength(2);
    expect(Object.getPrototypeOf(ours.rows[0])).toBe(Object.prototype);
    expect(Object.hasOwn(ours.rows[0], '__proto__')).toBe(true);
    expect(ours.fields).toEqual(theirs.fields);
    expect([ours.command, ours.rowCount]).toEqual([theirs.command, theirs.rowCount]);
  });

  it('gives the command and count of a statement without rows, and of one that returns some', async () => {
    await client.query('CREATE TEMPORARY TABLE marks (n int)');
    const inserted = await run('INSERT INTO marks SELECT generate_series(1, $1::int)', [3]);
    expect([inserted.command, inserted.rowCount, inserted.rows]).toEqual(['INSERT', 3, []]);
    const updated = await run('UPDATE marks SET n = n + $1::int WHERE n > 1 RETURNING n', [10]);
    expect([updated.command, updated.rowCount]).toEqual(['UPDATE', 2]);
    expect(updated.rows).toEqual([{ n: 12 }, { n: 13 }]);
  });

  it("parses with the client's type parsers", async () => {
    const types: TypeParsers = {
      getTypeParser: (oid, format) =>
        oid === 23 ? (value) => `int4 ${String(value)}` : client.getTypeParser(oid, format),
    };
    const { rows } = await run('SELECT $1::int AS n, $2::text AS s', [5, 'five'], types);
    expect(rows).toEqual([{ n: 'int4 5', s: 'five' }]);
  });

  it("fails with a type parser's error once the statement ends, and the connection goes on", async () => {
    const types: TypeParsers = {
      getTypeParser: () => () => {
        throw new Error('cannot parse');
      },
    };
    await expect(run('SELECT $1::int AS n', [1], types)).rejects.toThrow('cannot parse');
    expect((await run('SELECT $1::int AS n', [2])).rows).toEqual([{ n: 2 }]);
  });

  it('builds the rows of more shapes than it keeps builders for', async () => {
    for (let i = 0; i < 300; i++) {
      const { rows } = await run(`SELECT $1::int AS "shape ${i}", $1::int + 1 AS "next"`, [i]);
      expect(rows).toEqual([{ [`shape ${i}`]: i, next: i + 1 }]);
    }
  });
});
