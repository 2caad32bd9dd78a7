/**
 * `npm run bench`: the service (dist/main.js, NODE_ENV=production) against a
 * hand-written reference (bench/reference), on SQLite and on PostgreSQL,
 * measured in turns so that a drift of the machine's speed hits both. Then
 * the service alone at scale: 1,000,000 plants behind a list, a 200,000-plant
 * list streamed whole, start-up time and idle memory. Options: USAGE below.
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { createDatabases, type BenchDatabases, type DatabaseKind } from './support/databases.js';
import { measureBigList, type BigListResult } from './support/big-list.js';
import { cpuSecondsOf, memoryOf, startServer, type Server } from './support/processes.js';
import { parseSettings, POSTGRES_ADMIN_URL } from './support/settings.js';
import { LISTED_PLANTS, OWNERS, SCENARIOS, type Owner, type Target } from './support/scenarios.js';

const USAGE = `npm run bench [-- options]
  (none)                   the full run (about 10 minutes)
  --quick                  a smoke run (CI): short turns, small data
  --db sqlite,postgres     --scenario list,create,delete,mix
  --rounds N --duration SECONDS --warmup SECONDS --connections N
  --skip-scale             leave out the 1,000,000-plant list, the 200,000-plant list and memory
  --service-env KEY=VALUE  start the service with a setting changed, e.g. LOG_LEVEL=warn
  --versus-env KEY=VALUE   the service against itself: the reference's turns are the service's
                           (with --service-env), the service's have this setting changed too;
                           cpu x is then what the setting saves or costs
  --versus-node-arg=ARG    the same with a Node option changed on the service's side only,
                           e.g. --versus-node-arg=--allocation-site-pretenuring
  --node-arg=ARG           a Node option for the service (both sides in --versus-* modes),
                           e.g. --node-arg=--cpu-prof
  --reference-node-arg=ARG the same for the reference
  --service floor          bench/floor in the service's place: the reference's handlers and
                           store under NestJS, its Fastify adapter and a passport guard, and
                           nothing else; cpu x is then what the fixed stack alone costs
Prints a table, writes bench/results.json, exits 1 when any request failed.`;

const args = (() => {
  try {
    return parseArgs({
      options: {
        quick: { type: 'boolean', default: false },
        db: { type: 'string', default: 'sqlite,postgres' },
        scenario: { type: 'string', default: SCENARIOS.map((s) => s.name).join(',') },
        rounds: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        connections: { type: 'string', default: '32' },
        'skip-scale': { type: 'boolean', default: false },
        // Node options for the service, e.g. --cpu-prof; --reference-node-arg for the reference.
        'node-arg': { type: 'string', multiple: true, default: [] },
        'reference-node-arg': { type: 'string', multiple: true, default: [] },
        // KEY=VALUE for the service's environment, e.g. LOG_LEVEL=warn to see what the request log costs.
        'service-env': { type: 'string', multiple: true, default: [] },
        // KEY=VALUE: measure the service against itself, this setting changed (see USAGE).
        'versus-env': { type: 'string', multiple: true, default: [] },
        'versus-node-arg': { type: 'string', multiple: true, default: [] },
        service: { type: 'string', default: 'service' },
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
})();

if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
/** bench/floor instead of the service (see USAGE): it takes no service settings and has no scale part. */
const floor = args.service === 'floor';
if (
  !['service', 'floor'].includes(args.service) ||
  (floor &&
    args['versus-env'].length + args['versus-node-arg'].length + args['service-env'].length > 0)
) {
  console.error(
    `--service takes service or floor, and floor goes with neither --service-env nor --versus-*\n\n${USAGE}`,
  );
  process.exit(2);
}

const quick = args.quick;
const rounds = Number(args.rounds ?? (quick ? 1 : 6));
const duration = Number(args.duration ?? (quick ? 1 : 3));
const warmup = Number(args.warmup ?? (quick ? 1 : 3));
const connections = Number(args.connections);
const scaleRows = quick ? 20_000 : 1_000_000;
const bigListRows = quick ? 20_000 : 200_000;

const SERVICE = resolve(floor ? 'dist/bench/floor/main.js' : 'dist/main.js');
const environment = (option: 'service-env' | 'versus-env') => parseSettings(args[option], option);
const extraServiceEnv = environment('service-env');
const versusEnv = environment('versus-env');
/** The service against itself: the reference side runs the service with the settings of --service-env alone. */
const versusChanges = [...args['versus-env'], ...args['versus-node-arg']];
const versus = versusChanges.length > 0;
const REFERENCE = resolve('dist/bench/reference/server.js');

interface Run {
  rps: number;
  /** The server's CPU time (user + system) per answered request, in µs. */
  cpuUs: number;
  p50: number;
  p99: number;
  requests: number;
  failed: number;
  statuses: Record<string, number>;
}

interface ScenarioResult {
  db: DatabaseKind;
  scenario: string;
  /** rounds + 1 runs: the first and the last turn are the reference's. */
  reference: Run[];
  service: Run[];
}

async function load(
  target: Pick<Target, 'url' | 'pid'>,
  requests: autocannon.Request[],
  seconds: number,
): Promise<Run> {
  const cpuBefore = cpuSecondsOf(target.pid);
  const result = await autocannon({ url: target.url, connections, duration: seconds, requests });
  const cpuSeconds = cpuSecondsOf(target.pid) - cpuBefore;
  const statuses = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s?.count ?? 0]),
  );
  return {
    rps: result.requests.total / seconds,
    cpuUs: (cpuSeconds * 1e6) / Math.max(result.requests.total, 1),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    failed: result.errors + result.timeouts + result.non2xx,
    statuses,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

function summary(runs: Run[]) {
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    failed: runs.reduce((sum, r) => sum + r.failed, 0),
  };
}

/**
 * Runs `a` and `b` in turns, a b a b ... a: every run of `b` has a run of `a`
 * just before and just after it, so that a drift of the machine's speed
 * during the turns hits both.
 */
async function inTurns(
  a: () => Promise<Run>,
  b: () => Promise<Run>,
  onRun?: (run: Run, side: 'a' | 'b') => void,
) {
  const runs = { a: [] as Run[], b: [] as Run[] };
  for (let round = 0; round <= rounds; round++) {
    runs.a.push(await a());
    onRun?.(runs.a[runs.a.length - 1], 'a');
    if (round === rounds) break;
    runs.b.push(await b());
    onRun?.(runs.b[runs.b.length - 1], 'b');
  }
  return runs;
}

/**
 * b against a, run by run: each run of b over the mean of the runs of a
 * before and after it; the median of those ratios, for req/s and for p99.
 */
function compare(a: Run[], b: Run[]) {
  const around = (i: number, key: 'rps' | 'p99' | 'cpuUs') => (a[i][key] + a[i + 1][key]) / 2;
  return {
    rps: median(b.map((run, i) => run.rps / around(i, 'rps'))),
    p99: median(b.map((run, i) => run.p99 / Math.max(around(i, 'p99'), 1))),
    cpu: median(b.map((run, i) => run.cpuUs / around(i, 'cpuUs'))),
  };
}

async function target(name: Target['name'], server: Server, seeder: BenchDatabases['service']) {
  const tokens = {} as Record<Owner, string>;
  for (const owner of OWNERS) tokens[owner] = await seeder.token(owner);
  for (const owner of ['list', 'mix'] as const) await seeder.plants(owner, 1n, LISTED_PLANTS);
  return {
    name,
    url: server.url,
    pid: server.child.pid!,
    seeder,
    tokens,
    runs: 0,
  } satisfies Target;
}

interface DatabaseReport {
  db: DatabaseKind;
  scenarios: ScenarioResult[];
  startup: Record<Target['name'], { startupMs: number; idleRssBytes: number }>;
  scale?: { rows: number; small: Run[]; large: Run[]; plan: string };
  bigList?: BigListResult[];
}

async function idleRss(server: Server): Promise<number> {
  await new Promise((r) => setTimeout(r, 1000));
  return memoryOf(server.child.pid!, 'VmRSS');
}

async function benchDatabase(db: DatabaseKind): Promise<DatabaseReport> {
  const databases = await createDatabases(db, POSTGRES_ADMIN_URL);
  const servers: Server[] = [];
  try {
    // Rate limiting on, as deployed, with a budget no bench run can spend: the bench sends
    // one owner far more than the default RATE_LIMIT_MAX a minute. Everything else runs as
    // deployed, request log and metrics included.
    const serviceEnv = {
      DATABASE_URL: databases.service.url,
      RATE_LIMIT_MAX: '10000000',
      ...extraServiceEnv,
    };
    const service = await startServer(
      'service',
      SERVICE,
      floor ? { DATABASE_URL: databases.service.url } : { ...serviceEnv, ...versusEnv },
      [...args['node-arg'], ...args['versus-node-arg']],
    );
    servers.push(service);
    const reference = versus
      ? await startServer(
          'reference',
          SERVICE,
          { ...serviceEnv, DATABASE_URL: databases.reference.url },
          args['node-arg'],
        )
      : await startServer(
          'reference',
          REFERENCE,
          { DATABASE_URL: databases.reference.url },
          args['reference-node-arg'],
        );
    servers.push(reference);
    const report: DatabaseReport = {
      db,
      scenarios: [],
      startup: {
        service: { startupMs: service.startupMs, idleRssBytes: await idleRss(service) },
        reference: { startupMs: reference.startupMs, idleRssBytes: await idleRss(reference) },
      },
    };
    const targets = [
      await target('reference', reference, databases.reference),
      await target('service', service, databases.service),
    ];
    for (const scenario of SCENARIOS.filter((s) => args.scenario.split(',').includes(s.name))) {
      const result: ScenarioResult = { db, scenario: scenario.name, reference: [], service: [] };
      for (const t of targets) await load(t, await scenario.prepare(t, warmup), warmup);
      const turn = (t: Target) => async () =>
        load(t, await scenario.prepare(t, duration), duration);
      const runs = await inTurns(turn(targets[0]), turn(targets[1]), (run, side) =>
        log(
          `${db} ${scenario.name} ${side === 'a' ? 'reference' : 'service'}: ${run.rps.toFixed(0)} req/s, p99 ${run.p99} ms${run.failed ? `, ${run.failed} failed ${JSON.stringify(run.statuses)}` : ''}`,
        ),
      );
      result.reference = runs.a;
      result.service = runs.b;
      report.scenarios.push(result);
    }
    if (!args['skip-scale'] && !floor) {
      const serviceTarget = targets[1];
      log(`${db}: seeding ${scaleRows} plants for the scale list`);
      await databases.service.plants('scale', 1n, scaleRows);
      await databases.service.analyze();
      const plan = await databases.service.explainList('scale');
      const listOf = (owner: Owner): autocannon.Request[] => [
        {
          method: 'GET',
          path: '/plants?limit=20',
          headers: { authorization: `Bearer ${serviceTarget.tokens[owner]}` },
        },
      ];
      await load(serviceTarget, listOf('scale'), warmup);
      const runs = await inTurns(
        () => load(serviceTarget, listOf('list'), duration),
        () => load(serviceTarget, listOf('scale'), duration),
      );
      const scale = { rows: scaleRows, small: runs.a, large: runs.b, plan };
      report.scale = scale;
      log(`${db}: seeding ${bigListRows} plants for the big list`);
      await databases.service.plants('big', 1n, bigListRows);
      // Twice: the first request after seeding, and once more; the target holds for both.
      report.bigList = [];
      for (let i = 0; i < 2; i++) {
        report.bigList.push(await measureBigList(service, serviceTarget.tokens.big, bigListRows));
      }
    }
    return report;
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await databases.drop();
  }
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({
    connectionString: POSTGRES_ADMIN_URL,
    connectionTimeoutMillis: 2000,
  });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const pad = (text: string | number, width: number) => String(text).padStart(width);
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

function printReport(reports: DatabaseReport[]): boolean {
  let targetsMet = true;
  const lines: string[] = [];
  lines.push(
    `${'scenario'.padEnd(10)} ${'db'.padEnd(8)} ${pad('ref req/s', 10)} ${pad('svc req/s', 10)} ${pad('ratio', 6)} ${pad('ref p50', 8)} ${pad('svc p50', 8)} ${pad('ref p99', 8)} ${pad('svc p99', 8)} ${pad('p99 x', 6)} ${pad('cpu x', 6)} ${pad('errors', 7)}  target`,
  );
  for (const report of reports) {
    for (const s of report.scenarios) {
      const ref = summary(s.reference);
      const svc = summary(s.service);
      const ratio = compare(s.reference, s.service);
      const met = ratio.rps >= 0.8 && ratio.p99 <= 1.5;
      targetsMet &&= met && !versus && !floor;
      lines.push(
        `${s.scenario.padEnd(10)} ${s.db.padEnd(8)} ${pad(ref.rps.toFixed(0), 10)} ${pad(svc.rps.toFixed(0), 10)} ${pad(ratio.rps.toFixed(2), 6)} ${pad(ref.p50, 8)} ${pad(svc.p50, 8)} ${pad(ref.p99, 8)} ${pad(svc.p99, 8)} ${pad(ratio.p99.toFixed(2), 6)} ${pad(ratio.cpu.toFixed(2), 6)} ${pad(ref.failed + svc.failed, 7)}  ${versus || floor ? '-' : met ? 'met' : 'NOT MET'}`,
      );
    }
  }
  lines.push(
    '(req/s and latencies (ms): medians of the runs; ratio, p99 x and cpu x (server CPU time per request): service/reference, each service run against the mean of the reference runs just before and after it, median of those)',
  );
  for (const report of reports) {
    const { service, reference } = report.startup;
    lines.push(
      `${report.db}: start-up to first answer: service ${service.startupMs.toFixed(0)} ms, reference ${reference.startupMs.toFixed(0)} ms; idle RSS: service ${mib(service.idleRssBytes)}, reference ${mib(reference.idleRssBytes)}`,
    );
    if (report.scale) {
      const small = summary(report.scale.small);
      const large = summary(report.scale.large);
      const ratio = compare(report.scale.small, report.scale.large).rps;
      targetsMet &&= ratio >= 0.9;
      lines.push(
        `${report.db}: list limit=20, ${report.scale.rows} plants vs ${LISTED_PLANTS}: ${large.rps.toFixed(0)} vs ${small.rps.toFixed(0)} req/s, ratio ${ratio.toFixed(2)} (target >= 0.90: ${ratio >= 0.9 ? 'met' : 'NOT MET'}); plan: ${report.scale.plan}`,
      );
    }
    for (const [i, b] of (report.bigList ?? []).entries()) {
      const met = b.valid && b.rssGrowthBytes < 64 * 2 ** 20 && b.firstByteMs < 100;
      targetsMet &&= met;
      lines.push(
        `${report.db}: GET /plants (no limit) over ${b.rows} plants, ${i === 0 ? 'first' : 'again'}: first byte ${b.firstByteMs.toFixed(1)} ms, total ${b.totalMs.toFixed(0)} ms, ${mib(b.bytes)}, peak RSS growth ${mib(b.rssGrowthBytes)} (${b.rssMethod}), one valid array of ${b.count}: ${b.valid} (target < 64 MiB, < 100 ms, valid: ${met ? 'met' : 'NOT MET'})`,
      );
    }
  }
  console.log(lines.join('\n'));
  return targetsMet;
}

async function main(): Promise<void> {
  const kinds = args.db.split(',') as DatabaseKind[];
  const reports: DatabaseReport[] = [];
  for (const kind of kinds) {
    if (kind === 'postgres' && !(await postgresReachable())) {
      log(`PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL}: its half of the bench is skipped`);
      continue;
    }
    log(`== ${kind}`);
    reports.push(await benchDatabase(kind));
  }
  console.log(
    `\nPlant Store bench, ${new Date().toISOString()}, Node ${process.version}, ${cpus().length} cores, ${mib(totalmem())} memory; ${connections} connections, turns of ${duration} s (reference ${rounds + 1}, service ${rounds}) after ${warmup} s of warm-up each${quick ? ' (quick)' : ''}${args['service-env'].length > 0 ? `; service environment: ${args['service-env'].join(' ')}` : ''}${versus ? `\nversus: "ref" is the service itself, "svc" the service with ${versusChanges.join(' ')}` : ''}${floor ? '\nfloor: "svc" is bench/floor, the reference\'s handlers and store under NestJS and passport' : ''}\n`,
  );
  const targetsMet = printReport(reports);
  writeFileSync(
    resolve('bench/results.json'),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        node: process.version,
        cores: cpus().length,
        quick,
        rounds,
        duration,
        connections,
        serviceEnv: extraServiceEnv,
        versusEnv,
        versusNodeArgs: args['versus-node-arg'],
        service: args.service,
        reports,
        targetsMet,
      },
      null,
      2,
    ),
  );
  const failed =
    reports
      .flatMap((r) => r.scenarios.flatMap((s) => [...s.reference, ...s.service]))
      .reduce((n, run) => n + run.failed, 0) +
    reports
      .flatMap((r) => [...(r.scale?.small ?? []), ...(r.scale?.large ?? [])])
      .reduce((n, run) => n + run.failed, 0) +
    reports.flatMap((r) => r.bigList ?? []).filter((b) => !b.valid).length;
  if (failed > 0) {
    console.error(`${failed} request(s) failed`);
    process.exitCode = 1;
  }
}

await main();
