/**
 * What a create's statement costs PostgreSQL itself: the CPU time of the server process that runs
 * it, per statement, for the service's create (its entry in src/plants/sql/plants.postgres.sql,
 * which `npm run sql:check` keeps equal to what the service runs) and the same-work reference's
 * (reference/store.ts). On a 2-core machine PostgreSQL shares the cores with the servers of
 * `npm run bench`, so what it spends per create is a create's cost too, outside the server's CPU.
 *
 * One throwaway database with the reference's schema, one connection per statement, plants of an
 * owner without webhook subscriptions (as in the bench's scenarios), alternating batches after a
 * warm-up, `synchronous_commit = off` on both connections (a commit's flush is a wait, not CPU).
 * The CPU is read from /proc/<pid>/stat of each connection's server process (cpuSecondsOf, as the
 * bench reads its servers'): PostgreSQL must run on this machine (BENCH_POSTGRES_URL).
 *
 *   npm run bench:statement-cost [-- --quick] [--snapshot PATH]
 *
 * `--quick` is CI's smoke run: it checks that both statements run; its figures are coarse (the
 * kernel counts CPU in ticks of 10 ms, a few of them per batch).
 *
 * `--snapshot` reads the service's statement from another copy of that file, e.g. an earlier
 * commit's (`git show <commit>:src/plants/sql/plants.postgres.sql > /tmp/before.sql`).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { POSTGRES_CREATE, SCHEMA } from './reference/store.js';
import { createDatabases } from './support/databases.js';
import { median } from './support/median.js';
import { cpuSecondsOf } from './support/processes.js';
import { POSTGRES_ADMIN_URL } from './support/settings.js';

const SNAPSHOT = 'src/plants/sql/plants.postgres.sql';
const ENTRY = '-- PlantsRepository.insertThen';

/** The service's create as its SQL snapshot has it: the lines after its entry's comment. */
function serviceCreate(snapshot: string): string {
  const lines = readFileSync(snapshot, 'utf8').split('\n');
  const start = lines.findIndex((line) => line.startsWith(ENTRY));
  if (start < 0) throw new Error(`${snapshot} has no entry ${ENTRY}`);
  const end = lines.findIndex((line, at) => at > start && line.trim() === '');
  return lines
    .slice(start + 1, end < 0 ? undefined : end)
    .join('\n')
    .replace(/;\s*$/, '');
}

interface Side {
  label: string;
  client: pg.Client;
  pid: number;
  run: (id: number) => Promise<unknown>;
}

async function side(
  url: string,
  label: string,
  sql: string,
  values: (id: number) => unknown[],
): Promise<Side> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('SET synchronous_commit = off');
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return { label, client, pid: rows[0].pid, run: (id) => client.query(sql, values(id)) };
}

async function main(): Promise<void> {
  const { values: options } = parseArgs({
    options: { quick: { type: 'boolean' }, snapshot: { type: 'string', default: SNAPSHOT } },
  });
  const [warmup, batches, perBatch] = options.quick ? [300, 3, 1_500] : [2_000, 7, 3_000];
  const databases = await createDatabases('postgres', POSTGRES_ADMIN_URL, ['statements']);
  const url = databases.of.statements.url;
  const sides: Side[] = [];
  try {
    const schema = new pg.Client({ connectionString: url });
    await schema.connect();
    for (const statement of SCHEMA.postgres) await schema.query(statement);
    await schema.end();
    const payload = '{"type":"plant.created"}';
    // Ids apart per side: every statement inserts a new plant.
    sides.push(
      await side(url, 'service', serviceCreate(options.snapshot), (id) => [
        'owner-s',
        String(id),
        'Monstera deliciosa',
        'tropical',
        payload,
        Date.now(),
        null,
      ]),
      await side(url, 'same-work', POSTGRES_CREATE, (id) => [
        'owner-r',
        String(id),
        'Monstera deliciosa',
        'tropical',
        payload,
        Date.now(),
        Date.now(),
      ]),
    );
    let next = 1;
    for (const { run } of sides) for (let i = 0; i < warmup; i++) await run(next++);
    const cpu = new Map<string, number[]>(sides.map(({ label }) => [label, []]));
    const wall = new Map<string, number[]>(sides.map(({ label }) => [label, []]));
    for (let batch = 0; batch < batches; batch++) {
      for (const { label, pid, run } of sides) {
        const cpuBefore = cpuSecondsOf(pid);
        const started = process.hrtime.bigint();
        for (let i = 0; i < perBatch; i++) await run(next++);
        wall.get(label)!.push(Number(process.hrtime.bigint() - started) / 1e3 / perBatch);
        cpu.get(label)!.push(((cpuSecondsOf(pid) - cpuBefore) * 1e6) / perBatch);
      }
    }
    console.log(
      `PostgreSQL's CPU per create statement, ${batches} alternating batches of ${perBatch} ` +
        `after ${warmup} each, one connection each (median batch):`,
    );
    for (const { label } of sides) {
      console.log(
        `  ${label.padEnd(10)} ${median(cpu.get(label)!).toFixed(0).padStart(5)} µs CPU, ` +
          `${median(wall.get(label)!).toFixed(0).padStart(5)} µs a round trip`,
      );
    }
    const ratio = median(cpu.get('service')!) / median(cpu.get('same-work')!);
    console.log(`  service / same-work: ${ratio.toFixed(2)}`);
  } finally {
    for (const { client } of sides) await client.end();
    await databases.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
