/**
 * Data-access styles: µs per call of each public TypeORM way to run the service's hot-path
 * operations (token lookup, list page of 20 with and without ids, insert + outbox write in one
 * transaction, the insert alone, delete by (owner, id)) on SQLite (better-sqlite3, temp file, WAL)
 * and PostgreSQL (direct, and through PgBouncer with --pgbouncer-url):
 *   a. Repository / EntityManager methods (findOne, find, insert, delete);
 *   b. a QueryBuilder built on every call (getRawOne, getRawMany, execute);
 *   c. the SQL that QueryBuilder generated once at start-up, run through query();
 *   c′, c″ (delete only): the affected-row count from QueryRunner.query(sql, params, true)
 *      (runner created and released per call), or from query() with ` RETURNING 1` appended.
 * The outbox INSERT … SELECT is the same hand-written SQL in every style. The service's own options,
 * migrations and entities come from dist/ at run time (src/ is outside this tsconfig's rootDir).
 * Seed: one owner with a token and 10,000 plants, no webhook subscriptions. Calls run one at a time
 * (TypeORM's better-sqlite3 driver shares one query runner): after a warm-up, an operation's styles
 * run in alternating batches; a cell is the median batch's µs per call and its ratio to the row's
 * fastest. The line under each table checks BigInt ids above 2^53.
 *
 *   npx nest build && npx tsc -p bench/tsconfig.json && node dist/bench/data-access-styles.js \
 *     [--quick] [--db sqlite,postgres] [--pgbouncer-url postgres://postgres@127.0.0.1:6432/]
 *
 * PostgreSQL: a throwaway database on BENCH_POSTGRES_URL (support/settings.ts). PgBouncer must route
 * its name (a `* = host=… port=…` fallback) and accept the startup parameters the options send.
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Logger } from '@nestjs/common';
import { DataSource, type DataSourceOptions, type EntityManager, type EntityTarget } from 'typeorm';
import { type FindOptionsSelect, IsNull } from 'typeorm';
import { createDatabases } from './support/databases.js';
import { POSTGRES_ADMIN_URL } from './support/settings.js';

type PlantRecord = { owner: string; id: string | bigint; name: string; tag: string | null };
interface Service {
  dataSourceOptions(env: object, entities: unknown[]): DataSourceOptions;
  Plant: EntityTarget<PlantRecord>;
  ApiToken: EntityTarget<{ owner: string; tokenHash: string; revokedAt: string | null }>;
  WebhookSubscription: unknown;
}
type Call = () => Promise<unknown>;
type Insert = (m: EntityManager, p: PlantRecord) => Promise<unknown>;
const STYLES = {
  a: 'a. Repository',
  b: 'b. QueryBuilder',
  c: 'c. prebuilt SQL, query()',
  cr: 'c′. QueryRunner query(…, true)',
  cx: 'c″. query() + RETURNING 1',
};
/** `ok` checks each style's first result; a delete style that cannot tell answers null (†). */
type Row = {
  label: string;
  write?: true;
  calls: Record<string, Call>;
  ok?: (r: unknown) => boolean;
};

const OWNER = 'bench-owner';
/** The compiled service's modules this bench uses, under dist/. */
const SERVICE_MODULES =
  'database/data-source-options plants/plant.entity auth/api-token.entity webhooks/webhook-subscription.entity';
/** Per style: [warm-up calls, batches, calls per batch]. */
const PLANS = {
  full: { read: [1000, 15, 400], write: [50, 15, 40] },
  quick: { read: [100, 5, 100], write: [10, 5, 10] },
};

/** The SQL of a QueryBuilder built with its parameters' names as values, checking their order. */
function sqlOf(qb: { getQueryAndParameters(): [string, unknown[]] }, order: string[]): string {
  const [sql, params] = qb.getQueryAndParameters();
  if (params.join() !== order.join()) throw new Error(`parameters ${params.join()} in ${sql}`);
  return sql;
}

/** One table's rows on `ds`: inserts take fresh ids after `last`, deletes take them back. */
function suite(ds: DataSource, { Plant, ApiToken }: Service, hash: string, last: bigint) {
  const [plants, tokens] = [ds.getRepository(Plant), ds.getRepository(ApiToken)];
  const pg = ds.options.type === 'postgres';
  const inserted: string[] = [];
  const plant = (): PlantRecord => {
    inserted.push(String(++last));
    return { owner: OWNER, id: String(last), name: `plant ${last}`, tag: null };
  };
  const taken = () => {
    const id = inserted.pop();
    if (id === undefined) throw new Error('no inserted plant left to delete');
    return id;
  };

  const live = 't.tokenHash = :h AND t.revokedAt IS NULL';
  const tokenQb = (h: string) =>
    tokens.createQueryBuilder('t').select('t.owner', 'owner').where(live, { h });
  const tokenSql = sqlOf(tokenQb('h'), ['h']);
  const tokenWhere = (tokenHash: string) => ({ tokenHash, revokedAt: IsNull() });
  const find = (select: FindOptionsSelect<PlantRecord>) =>
    plants.find({ select, where: { owner: OWNER }, order: { id: 'ASC' }, take: 20 });
  const list = (id?: string, alias?: string): Row['calls'] => {
    const listQb = (owner: string) => {
      const qb = plants.createQueryBuilder('p').select(['p.name', 'p.tag']);
      if (id) qb.addSelect(id, alias);
      return qb.where('p.owner = :owner', { owner }).orderBy('p.id', 'ASC').limit(20);
    };
    const sql = sqlOf(listQb('owner'), ['owner']);
    return { b: () => listQb(OWNER).getRawMany(), c: () => ds.query(sql, [OWNER]) };
  };
  const twenty = (page: unknown) => (page as unknown[]).length === 20;

  const insertQb = (m: EntityManager, p: PlantRecord) =>
    m.createQueryBuilder().insert().into(Plant).values(p);
  const [owner, id, name, tag] = ['owner', 'id', 'name', 'tag'];
  const insertSql = sqlOf(insertQb(ds.manager, { owner, id, name, tag }), [owner, id, name, tag]);
  const inserts: Record<string, Insert> = {
    a: (m, p) => m.insert(Plant, p),
    b: (m, p) => insertQb(m, p).execute(),
    c: (m, p) => m.query(insertSql, [p.owner, p.id, p.name, p.tag]),
  };
  const $ = (n: number) => (pg ? `$${n}` : '?');
  const outboxSql = `INSERT INTO webhook_deliveries (id, subscription_id, payload, state, attempts, next_attempt_at, created_at, trace_parent)
    SELECT ${pg ? "'msg_' || replace(gen_random_uuid()::text, '-', '')" : "'msg_' || lower(hex(randomblob(16)))"},
      s.id, ${$(1)}, 'pending', 0, ${$(2)}, ${$(3)}, NULL FROM webhook_subscriptions s WHERE s.owner = ${$(4)} AND s.disabled_at IS NULL`;
  const withOutbox = (insert: Insert) => () => {
    const p = plant();
    const [event, now] = [JSON.stringify({ type: 'plant.created', data: p }), Date.now()];
    return ds.transaction(async (m) => {
      await insert(m, p);
      await m.query(outboxSql, [event, now, now, OWNER]);
    });
  };
  const each = (make: (insert: Insert) => Call) =>
    Object.fromEntries(Object.entries(inserts).map(([style, insert]) => [style, make(insert)]));

  const deleteQb = (key: { owner: string; id: string }) =>
    ds.createQueryBuilder().delete().from(Plant).where('owner = :owner AND id = :id', key);
  const deleteSql = sqlOf(deleteQb({ owner, id }), [owner, id]);
  const one = (count?: number | null) => count === 1;
  // query() answers a DELETE with [rows, rowCount] on PostgreSQL, with lastInsertRowid on SQLite.
  const answer = (sql: string) => ds.query<unknown[]>(sql, [OWNER, taken()]);

  const rows: Row[] = [
    {
      label: 'token lookup',
      calls: {
        a: () => tokens.findOne({ select: { owner: true }, where: tokenWhere(hash) }),
        b: () => tokenQb(hash).getRawOne(),
        c: () => ds.query(tokenSql, [hash]),
      },
      ok: (r) => ([r].flat()[0] as { owner?: string } | null)?.owner === OWNER, // a row or [row]
    },
    {
      label: 'list page (name, tag)',
      calls: { a: () => find({ name: true, tag: true }), ...list() },
      ok: twenty,
    },
    {
      label: 'list page + id, plain column',
      calls: { a: () => find({ id: true, name: true, tag: true }), ...list('p.id') },
      ok: twenty,
    },
    {
      label: 'list page + id, CAST(id AS TEXT)',
      calls: list('CAST(p.id AS TEXT)', 'id'),
      ok: twenty,
    },
    { label: 'insert + outbox (transaction)', write: true, calls: each(withOutbox) },
    {
      label: 'insert alone (no transaction)',
      write: true,
      calls: each((insert) => () => insert(ds.manager, plant())),
    },
    {
      label: 'delete by (owner, id)',
      write: true,
      calls: {
        a: async () => one((await plants.delete({ owner: OWNER, id: taken() })).affected),
        b: async () => one((await deleteQb({ owner: OWNER, id: taken() }).execute()).affected),
        c: async () =>
          pg ? one((await answer(deleteSql))[1] as number) : (await answer(deleteSql), null),
        cr: async () => {
          const runner = ds.createQueryRunner();
          try {
            return one((await runner.query(deleteSql, [OWNER, taken()], true)).affected);
          } finally {
            await runner.release();
          }
        },
        cx: async () => {
          const raw = await answer(`${deleteSql} RETURNING 1`);
          return one((pg ? (raw[0] as unknown[]) : raw).length);
        },
      },
      ok: (deleted) => deleted === true,
    },
  ];

  /** Whether BigInt ids reach the database intact through a, b and c; how 2^53 + 1 reads back. */
  const idChecks = async () => {
    const big = 2n ** 53n + 1n;
    const sql = `SELECT CAST(id AS TEXT) AS text, id AS plain FROM plants WHERE owner = ${$(1)} AND id = ${$(2)}`;
    const read = async (id: bigint) =>
      (await ds.query<{ text: string; plain: unknown }[]>(sql, [OWNER, id]))[0];
    const [stored, shown] = [[] as string[], (v: unknown) => `${typeof v} ${String(v)}`];
    let readBack = '';
    for (const [style, insert] of Object.entries(inserts)) {
      await insert(ds.manager, { owner: OWNER, id: big, name: 'big', tag: null });
      const [row, entity] = [await read(big), await plants.findOneBy({ owner: OWNER, id: big })];
      stored.push(`${style} ${row?.text === String(big) ? 'yes' : 'NO'}`);
      readBack = `plain column ${shown(row?.plain)}, CAST ${shown(row?.text)}, findOneBy ${shown(entity?.id)}`;
      await plants.delete({ owner: OWNER, id: big });
    }
    return `BigInt id 2^53 + 1 as a parameter, stored exactly: ${stored.join(', ')}; read back: ${readBack}.`;
  };
  return { rows, idChecks };
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

/** A table row: each style's median µs per call, and its ratio to the fastest; † if it answered null. */
async function measure(row: Row, plan: typeof PLANS.full): Promise<string> {
  const [warmup, batches, size] = row.write ? plan.write : plan.read;
  const calls = Object.entries(row.calls);
  const blind = new Set<string>();
  for (const [style, call] of calls) {
    const result = await call();
    if (result === null) blind.add(style);
    else if (row.ok && !row.ok(result))
      throw new Error(`${row.label}, ${style}: ${JSON.stringify(result)}`);
    for (let i = 0; i < warmup; i++) await call();
  }
  const samples = new Map(calls.map(([style]) => [style, [] as number[]]));
  for (let batch = 0; batch < batches; batch++) {
    for (const [style, call] of calls) {
      const start = performance.now();
      for (let i = 0; i < size; i++) await call();
      samples.get(style)!.push(((performance.now() - start) * 1000) / size);
    }
  }
  const us = new Map([...samples].map(([style, xs]) => [style, median(xs)]));
  const fastest = Math.min(...us.values());
  const cells = Object.keys(STYLES).map((style) => {
    const v = us.get(style);
    if (v === undefined) return '–';
    return `${v.toFixed(1)} ×${(v / fastest).toFixed(2)}${blind.has(style) ? ' †' : ''}`;
  });
  return `| ${row.label} | ${cells.join(' | ')} |`;
}

async function main(): Promise<void> {
  const flags = {
    quick: { type: 'boolean' },
    db: { type: 'string' },
    'pgbouncer-url': { type: 'string' },
  } as const;
  const { values } = parseArgs({ options: flags });
  const plan = values.quick ? PLANS.quick : PLANS.full;
  // TypeORM's messages (migrations) go through Nest's logger: stdout is for the tables.
  const toStderr = (message: unknown) => void process.stderr.write(`${JSON.stringify(message)}\n`);
  Logger.overrideLogger({ log: () => undefined, warn: toStderr, error: toStderr });
  const service = {} as Service;
  for (const module of SERVICE_MODULES.split(' '))
    Object.assign(service, await import(new URL(`../${module}.js`, import.meta.url).href));
  const env = { DB_POOL_SIZE: 10, DB_CONNECT_TIMEOUT_MS: 5000, DB_STATEMENT_TIMEOUT_MS: 10000 };
  const entities = [service.Plant, service.ApiToken, service.WebhookSubscription];

  console.log(
    `## TypeORM data-access styles (Node ${process.version}${values.quick ? ', --quick' : ''})`,
  );
  for (const kind of (values.db ?? 'sqlite,postgres').split(',')) {
    if (kind !== 'sqlite' && kind !== 'postgres')
      throw new Error(`--db: sqlite or postgres, not ${kind}`);
    const databases = await createDatabases(kind, POSTGRES_ADMIN_URL, ['styles']);
    try {
      const seeder = databases.of.styles;
      const targets = [
        [kind === 'sqlite' ? 'SQLite, temp file' : 'PostgreSQL, direct', seeder.url],
      ];
      if (kind === 'postgres' && values['pgbouncer-url']) {
        const url = new URL(values['pgbouncer-url']);
        url.pathname = new URL(seeder.url).pathname;
        targets.push(['PostgreSQL through PgBouncer', url.toString()]);
      }
      let hash = '';
      for (const [i, [title, url]] of targets.entries()) {
        const options = service.dataSourceOptions({ DATABASE_URL: url, ...env }, entities);
        const ds = await new DataSource(options).initialize();
        try {
          if (i === 0) {
            await ds.runMigrations();
            const token = await seeder.token(OWNER);
            hash = createHash('sha256').update(token).digest('hex');
            await seeder.plants(OWNER, 1n, 10_000);
            await seeder.analyze();
          }
          const { rows, idChecks } = suite(ds, service, hash, 10n ** 6n * BigInt(i + 1));
          console.log(
            `\n### ${title}\n\nµs per call, median of ${plan.read[1]} batches of ${plan.read[2]} reads or ${plan.write[2]} writes after warm-up; ×: to the row's fastest; †: no affected-row count.\n`,
          );
          console.log(
            `| operation | ${Object.values(STYLES).join(' | ')} |\n| --- |${' ---: |'.repeat(5)}`,
          );
          for (const row of rows) console.log(await measure(row, plan));
          console.log(`\n${await idChecks()}`);
        } finally {
          await ds.destroy();
        }
      }
    } finally {
      await databases.drop();
    }
  }
}

await main();
