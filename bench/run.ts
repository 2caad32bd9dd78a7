/**
 * `npm run bench`: the service (dist/bundle/main.js, NODE_ENV=production) against
 * four yardsticks doing the same API over the same tables: the same-work
 * reference (raw Fastify with the service's per-request features), the bare
 * reference (raw Fastify without them), the floor peer (the same work on the
 * least of the service's stack: NestJS, TypeORM's query runner) and the
 * conventional peer (NestJS the way its documentation teaches), on SQLite, on
 * PostgreSQL and on PostgreSQL through PgBouncer in transaction mode,
 * measured in turns so that a drift of the machine's speed hits every side.
 * Then the service alone at scale:
 * 1,000,000 plants behind a list, a 200,000-plant list streamed whole,
 * start-up time and idle memory. Options: USAGE below.
 */
import { accessSync, constants, existsSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { createDatabases } from './support/databases.js';
import { measureBigList, type BigListResult } from './support/big-list.js';
import { type BenchIssuer, type JwtAlgorithm, startIssuer } from './support/issuer.js';
import {
  PGBOUNCER_PATH,
  type PgBouncer,
  type PgBouncerLogins,
  startPgBouncer,
} from './support/pgbouncer.js';
import { headerDifferences, missingFeatures, probe, type ProbeResult } from './support/probe.js';
import {
  COMPILE_CACHE_SUPPORTED,
  cpuSecondsOf,
  cpuSecondsOfCommands,
  cpuSecondsSince,
  memoryOf,
  SERVICE_ENTRY,
  startServer,
  type Server,
} from './support/processes.js';
import { median } from './support/median.js';
import { parseSettings, POSTGRES_ADMIN_URL } from './support/settings.js';
import { buildSlowFlush } from './support/slow-flush.js';
import {
  LISTED_PLANTS,
  SCENARIOS,
  seedOwners,
  type Owner,
  type Scenario,
  type Target,
} from './support/scenarios.js';
import { type Yardstick, YARDSTICKS } from './support/yardsticks.js';

/**
 * pgbouncer: PostgreSQL through one PgBouncer (transaction pooling) started for the run; every
 * server's DATABASE_URL goes through it, the bench seeds and drops directly.
 */
const KINDS = ['sqlite', 'postgres', 'pgbouncer'] as const;
type BenchKind = (typeof KINDS)[number];

const USAGE = `npm run bench [-- options]
  (none)                   the full run (about 20 minutes)
  --quick                  a smoke run (CI): short turns, small data
  --db sqlite,postgres,pgbouncer
                           the databases (all three by default; pgbouncer is PostgreSQL with every
                           server's DATABASE_URL through one PgBouncer in transaction pooling mode,
                           ${PGBOUNCER_PATH} (PGBOUNCER_PATH), skipped when it is not installed;
                           the scale part below runs on sqlite and postgres only)
  --scenario list,create,delete,mix
  --yardsticks same-work,bare,floor,conventional
                           the servers the service is measured against (all four by default)
  --rounds N --duration SECONDS --warmup SECONDS --connections N
  --skip-scale             leave out the 1,000,000-plant list, the 200,000-plant list and memory
  --scale-only             only the 1,000,000-plant lists (the first page, and a page after a cursor
                           deep in them): no scenario, no 200,000-plant list
  --service-env KEY=VALUE  start the service with a setting changed, e.g. LOG_LEVEL=warn
                           (LOG_LEVEL and RATE_LIMIT_* reach the yardsticks too)
  --versus-env KEY=VALUE   the service against itself: the one yardstick is the service (with
                           --service-env), the service's side has this setting changed too;
                           cpu x is then what the setting saves or costs
  --versus-node-arg=ARG    the same with a Node option changed on the service's side only,
                           e.g. --versus-node-arg=--allocation-site-pretenuring
  --versus-caller jwt      the same, both sides accepting JWTs of a local issuer, with the
                           service's side listing as a JWT caller (RS256; jwt-es256: ES256)
                           and the baseline as an opaque-token caller; list scenario only
  --versus-build PATH      the same against another build of the service: the baseline runs the
                           bundle at PATH (e.g. /tmp/before/dist/bundle/main.js, built from an
                           earlier commit in a git worktree), the service's side this one
                           (both with this tree's tracing preload, which loads nothing unless
                           OTEL_* asks); --versus-build dist/bundle/main.js is the A/A control
  --node-arg=ARG           a Node option for the service (both sides in --versus-* modes),
                           e.g. --node-arg=--cpu-prof
  --reference-node-arg=ARG the same for the yardsticks
  --reference-named-statements
                           the reference (same-work, bare) runs named PostgreSQL statements, parsed
                           once per connection, instead of the unnamed ones the service runs to be
                           safe behind PgBouncer: a figure beside of what that costs. PostgreSQL
                           only: --db defaults to postgres, and pgbouncer is refused (in transaction
                           mode a name meets a server connection that lacks it or already has it)
  --slow-flush-ms N        a slower disk on SQLite: every fsync and fdatasync of each server process
                           (service and yardsticks alike) takes N ms longer, through an LD_PRELOAD
                           shim built with cc (bench/support/slow-flush.c), and is counted: prints
                           the flushes per 200 answer (per create) of every side; 0 only counts.
                           SQLite only: PostgreSQL flushes in its own processes, not the servers'
Every server first answers a probe (probe.ts) that checks its answers.
On PostgreSQL a run also reads what the machine's PostgreSQL processes (and PgBouncer, through it)
spent per request of each side: the rest of a request's CPU on the shared cores.
Prints a table, writes bench/results.json, exits 1 when any request failed or any probe found
a wrong answer.`;

const args = (() => {
  try {
    return parseArgs({
      options: {
        quick: { type: 'boolean', default: false },
        db: { type: 'string' },
        scenario: { type: 'string', default: SCENARIOS.map((s) => s.name).join(',') },
        rounds: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        connections: { type: 'string', default: '32' },
        yardsticks: { type: 'string', default: YARDSTICKS.map((y) => y.name).join(',') },
        'skip-scale': { type: 'boolean', default: false },
        'scale-only': { type: 'boolean', default: false },
        // Node options for the service, e.g. --cpu-prof; --reference-node-arg for the reference.
        'node-arg': { type: 'string', multiple: true, default: [] },
        'reference-node-arg': { type: 'string', multiple: true, default: [] },
        'reference-named-statements': { type: 'boolean', default: false },
        // KEY=VALUE for the service's environment, e.g. LOG_LEVEL=warn to see what the request log costs.
        'service-env': { type: 'string', multiple: true, default: [] },
        // KEY=VALUE: measure the service against itself, this setting changed (see USAGE).
        'versus-env': { type: 'string', multiple: true, default: [] },
        'versus-node-arg': { type: 'string', multiple: true, default: [] },
        'versus-caller': { type: 'string' },
        'versus-build': { type: 'string' },
        'slow-flush-ms': { type: 'string' },
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
const quick = args.quick;
const rounds = Number(args.rounds ?? (quick ? 1 : 6));
const duration = Number(args.duration ?? (quick ? 1 : 3));
const warmup = Number(args.warmup ?? (quick ? 1 : 3));
const connections = Number(args.connections);
const scaleRows = quick ? 20_000 : 1_000_000;
const bigListRows = quick ? 20_000 : 200_000;

const SERVICE = resolve(SERVICE_ENTRY);
const environment = (option: 'service-env' | 'versus-env') => parseSettings(args[option], option);
const extraServiceEnv = environment('service-env');
const versusEnv = environment('versus-env');
/** The service against itself: the reference side runs the service with the settings of --service-env alone. */
const CALLERS: Record<string, JwtAlgorithm> = { jwt: 'RS256', 'jwt-es256': 'ES256' };
const versusCaller = args['versus-caller'];
if (versusCaller !== undefined && (!(versusCaller in CALLERS) || args.scenario !== 'list')) {
  console.error(
    `--versus-caller takes ${Object.keys(CALLERS).join(' or ')}, with --scenario list\n\n${USAGE}`,
  );
  process.exit(2);
}
const versusBuild = args['versus-build'] === undefined ? undefined : resolve(args['versus-build']);
if (versusBuild !== undefined && !existsSync(versusBuild)) {
  console.error(`--versus-build: no bundle at ${versusBuild}\n\n${USAGE}`);
  process.exit(2);
}
const versusChanges = [
  ...args['versus-env'],
  ...args['versus-node-arg'],
  ...(versusCaller
    ? [`a JWT caller (${CALLERS[versusCaller]}) where the baseline has an opaque token`]
    : []),
];
const versus = versusChanges.length > 0 || versusBuild !== undefined;
const chosen = args.yardsticks.split(',');
const unknown = chosen.filter((name) => !YARDSTICKS.some((y) => y.name === name));
if (unknown.length > 0 || chosen.length === 0) {
  console.error(
    `--yardsticks takes names from ${YARDSTICKS.map((y) => y.name).join(',')}\n\n${USAGE}`,
  );
  process.exit(2);
}
/**
 * In --versus-* modes the one yardstick is the service itself (with --versus-build, the other
 * build), as --service-env alone sets it.
 */
const BASELINE = 'baseline';
const yardsticks: string[] = versus
  ? [BASELINE]
  : YARDSTICKS.filter((y) => chosen.includes(y.name)).map((y) => y.name);

const namedStatements = args['reference-named-statements'];
const kinds = (args.db ?? (namedStatements ? 'postgres' : KINDS.join(','))).split(
  ',',
) as BenchKind[];
if (kinds.some((kind) => !KINDS.includes(kind))) {
  console.error(`--db takes names from ${KINDS.join(',')}\n\n${USAGE}`);
  process.exit(2);
}
if (namedStatements && kinds.includes('pgbouncer')) {
  console.error(
    '--reference-named-statements cannot run through PgBouncer in transaction mode: a named ' +
      'statement is prepared on one server connection and the next transaction may get another ' +
      '(pg: prepared statement "..." already exists / does not exist). Measure it on --db postgres.',
  );
  process.exit(2);
}
/** The yardsticks that run bench/reference/server.ts. */
const REFERENCES = ['same-work', 'bare'];
if (namedStatements && !yardsticks.some((name) => REFERENCES.includes(name))) {
  console.error(
    `--reference-named-statements needs the same-work or bare yardstick (not --versus-*)\n\n${USAGE}`,
  );
  process.exit(2);
}
const slowFlushMs = args['slow-flush-ms'] === undefined ? undefined : Number(args['slow-flush-ms']);
if (slowFlushMs !== undefined && !(Number.isInteger(slowFlushMs) && slowFlushMs >= 0)) {
  console.error(`--slow-flush-ms takes a whole number of milliseconds\n\n${USAGE}`);
  process.exit(2);
}
if (slowFlushMs !== undefined && kinds.some((kind) => kind !== 'sqlite')) {
  console.error(
    '--slow-flush-ms: PostgreSQL flushes in its own server processes, which the shim is not in: ' +
      'only the sqlite part runs with slower flushes (and counts them)',
  );
}
/** --slow-flush-ms: the shim, given to every server on SQLite. */
const slowFlush =
  slowFlushMs !== undefined && kinds.includes('sqlite') ? buildSlowFlush(slowFlushMs) : undefined;

/** The reference's environment under --reference-named-statements (store.ts). */
const referenceEnv: Record<string, string> = namedStatements
  ? { REFERENCE_NAMED_STATEMENTS: 'true' }
  : {};

interface Run {
  rps: number;
  /** The server's CPU time (user + system) per answered request, in µs. */
  cpuUs: number;
  p50: number;
  p99: number;
  requests: number;
  failed: number;
  statuses: Record<string, number>;
  /** --slow-flush-ms: the server's fsync + fdatasync calls during the run. */
  flushes?: number;
  /**
   * The CPU time per answered request, in µs, of PostgreSQL's processes on this
   * machine (the server and every backend, whoever's) and of PgBouncer's, during
   * the run; undefined when there is none here.
   */
  database: Record<DatabaseProcess, number | undefined>;
}

/** The processes that serve the servers' statements, whose CPU a run reads too. */
const DATABASE_PROCESSES = ['postgres', 'pgbouncer'] as const;
type DatabaseProcess = (typeof DATABASE_PROCESSES)[number];

interface ScenarioResult {
  db: BenchKind;
  scenario: string;
  /** Per yardstick, rounds + 1 runs: the first and the last turn of each round are theirs. */
  yardsticks: Record<string, Run[]>;
  service: Run[];
}

async function load(
  target: Pick<Target, 'url' | 'pid' | 'flushes'>,
  requests: autocannon.Request[],
  seconds: number,
): Promise<Run> {
  const cpuBefore = cpuSecondsOf(target.pid);
  const databaseBefore = cpuSecondsOfCommands(DATABASE_PROCESSES);
  const flushesBefore = target.flushes?.();
  const result = await autocannon({ url: target.url, connections, duration: seconds, requests });
  const cpuSeconds = cpuSecondsOf(target.pid) - cpuBefore;
  const databaseAfter = cpuSecondsOfCommands(DATABASE_PROCESSES);
  const perRequest = (cpu: number) => (cpu * 1e6) / Math.max(result.requests.total, 1);
  const flushes = flushesBefore === undefined ? undefined : target.flushes!() - flushesBefore;
  const statuses = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s?.count ?? 0]),
  );
  return {
    rps: result.requests.total / seconds,
    cpuUs: perRequest(cpuSeconds),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    failed: result.errors + result.timeouts + result.non2xx,
    statuses,
    flushes,
    database: Object.fromEntries(
      DATABASE_PROCESSES.map((name) => {
        const seconds = cpuSecondsSince(databaseBefore.get(name)!, databaseAfter.get(name)!);
        return [name, seconds === undefined ? undefined : perRequest(seconds)];
      }),
    ) as Run['database'],
  };
}

/**
 * What the database's processes spent per request in `runs` (the median), for
 * the log: on SQLite nothing (the server does its own database work), through
 * PgBouncer PgBouncer's too; undefined when no such process runs on this machine.
 */
function databaseCpu(db: BenchKind, runs: Run[]): string | undefined {
  const names: DatabaseProcess[] =
    db === 'sqlite' ? [] : db === 'pgbouncer' ? ['postgres', 'pgbouncer'] : ['postgres'];
  const parts = names.flatMap((name) => {
    const figures = runs.map((run) => run.database[name]);
    if (figures.some((figure) => figure === undefined)) return [];
    const label = name === 'postgres' ? 'PostgreSQL' : 'PgBouncer';
    return [`${label} ${median(figures as number[]).toFixed(0)}`];
  });
  return parts.length === 0 ? undefined : `${parts.join(' + ')} µs`;
}

const prefixed = (prefix: string, text: string | undefined) =>
  text === undefined ? '' : prefix + text;

/** --slow-flush-ms: the flushes of a run per 200 answer (per create, in the create scenario). */
const flushesPerOk = (run: Run) => (run.flushes ?? 0) / Math.max(run.statuses['200'] ?? 0, 1);
const oksPerSecond = (run: Run) => (run.statuses['200'] ?? 0) / duration;

function summary(runs: Run[]) {
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    failed: runs.reduce((sum, r) => sum + r.failed, 0),
  };
}

/**
 * Runs the yardsticks (each in turn) and `measured` in rounds, Y b Y b ... Y:
 * every run of `measured` has a run of each yardstick just before and just
 * after it, so that a drift of the machine's speed during the turns hits all.
 */
async function inTurns(
  sides: Array<() => Promise<Run>>,
  measured: () => Promise<Run>,
  onRun?: (run: Run, side: number) => void,
) {
  const runs = { sides: sides.map(() => [] as Run[]), measured: [] as Run[] };
  for (let round = 0; round <= rounds; round++) {
    for (const [i, side] of sides.entries()) {
      runs.sides[i].push(await side());
      onRun?.(runs.sides[i].at(-1)!, i);
    }
    if (round === rounds) break;
    runs.measured.push(await measured());
    onRun?.(runs.measured.at(-1)!, -1);
  }
  return runs;
}

/**
 * b against a, run by run: each run of b over the mean of the runs of a
 * before and after it; the median of those ratios, for req/s, p99 and CPU per request.
 */
function compare(a: Run[], b: Run[]) {
  const around = (i: number, key: 'rps' | 'p99' | 'cpuUs') => (a[i][key] + a[i + 1][key]) / 2;
  return {
    rps: median(b.map((run, i) => run.rps / around(i, 'rps'))),
    p99: median(b.map((run, i) => run.p99 / Math.max(around(i, 'p99'), 1))),
    cpu: median(b.map((run, i) => run.cpuUs / around(i, 'cpuUs'))),
  };
}

async function target(
  db: BenchKind,
  name: string,
  server: Server,
  seeder: Target['seeder'],
): Promise<Target> {
  const tokens = await seedOwners(seeder);
  const flushes = slowFlush && db === 'sqlite' ? () => slowFlush.flushesOf(name) : undefined;
  return { name, url: server.url, pid: server.child.pid!, seeder, tokens, runs: 0, flushes };
}

interface DatabaseReport {
  db: BenchKind;
  scenarios: ScenarioResult[];
  startup: Record<string, { startupMs: number; startupCpuMs: number; idleRssBytes: number }>;
  /** What each server's probe found wrong (nothing, when all is well). */
  probes: Record<string, string[]>;
  scale?: { rows: number; small: Run[]; large: Run[]; plan: string };
  deepPage?: { afterRow: number; first: Run[]; deep: Run[] };
  bigList?: BigListResult[];
  /** pgbouncer: what its log says of the bench's databases, read before the servers stop. */
  pgbouncer?: PgBouncerLogins & { servers: number };
}

/** What an autoscaled instance may take before it answers, and hold while idle. */
const STARTUP_TARGET_MS = 1000;
const IDLE_RSS_TARGET_BYTES = 130 * 1024 * 1024;
/** How the service starts here, as the container starts it (bench/support/processes.ts). */
const STARTED_AS = COMPILE_CACHE_SUPPORTED
  ? 'its compile cache filled as the image build fills it'
  : 'without a compile cache (Node 22.1 added it; the container runs Node 24)';

async function idleRss(server: Server): Promise<number> {
  await new Promise((r) => setTimeout(r, 1000));
  return memoryOf(server.child.pid!, 'VmRSS');
}

/**
 * Every server's answers checked; the feature headers of the same-work reference and of the
 * floor against the service's.
 */
async function probeAll(targets: Target[]): Promise<Record<string, string[]>> {
  const results: Record<string, ProbeResult> = {};
  for (const t of targets) results[t.name] = await probe(t.url, t.tokens.probe);
  const problems = Object.fromEntries(
    Object.entries(results).map(([name, result]) => [name, [...result.problems]]),
  );
  // With a setting changed on the service (--service-env, --versus-env), it may rightly lack one.
  const asDeployed = args['service-env'].length === 0 && !versus;
  for (const name of [...(asDeployed ? ['service'] : []), 'same-work', 'floor', 'conventional']) {
    if (results[name]) problems[name].push(...missingFeatures(results[name].headers));
  }
  // The service pages: a page that has a next one links to it (and same-work must send the same).
  if (results.service && results.service.headers.link === undefined) {
    problems.service.push('no Link header on a page that has a next one');
  }
  for (const name of ['same-work', 'floor']) {
    if (results[name] && asDeployed) {
      problems[name].push(...headerDifferences(results.service.headers, results[name].headers));
    }
  }
  return problems;
}

/**
 * The service's side lists as a JWT caller: the list owner's plants are stored
 * again through the API under the JWT's owner, and its whole list must be the
 * baseline's, byte for byte, before any load.
 */
async function listAsJwtCaller(service: Target, baseline: Target, issuer: BenchIssuer) {
  // Valid for the whole run: a verified JWT is cached until it expires, as it would be for a client.
  const jwt = await issuer.sign('list', 3600);
  for (let id = 1; id <= LISTED_PLANTS; id++) {
    const tag = id % 2 === 0 ? ',"tag":"bench"' : '';
    const response = await fetch(`${service.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
      body: `{"id":${id},"name":"plant ${id}"${tag}}`,
    });
    if (response.status !== 200) throw new Error(`JWT caller's create answered ${response.status}`);
  }
  const listOf = async (t: Target, token: string) =>
    (await fetch(`${t.url}/plants`, { headers: { authorization: `Bearer ${token}` } })).text();
  if ((await listOf(service, jwt)) !== (await listOf(baseline, baseline.tokens.list))) {
    throw new Error("the JWT caller's list is not the opaque-token caller's");
  }
  service.tokens.list = jwt;
}

/** A database's direct URL, with PgBouncer's host and port: the same user and database name. */
function through(pgbouncer: PgBouncer, directUrl: string): string {
  const url = new URL(directUrl);
  url.host = new URL(pgbouncer.url).host;
  return url.toString();
}

/**
 * A page of 20 after a cursor 90 % of the way into the 1,000,000-plant owner's
 * list against that owner's first page, in turns: keyset paging makes both
 * one walk of 21 index entries. The cursor is the one the service's own next
 * link carries (read from the headers of a page that long; its body is not read).
 */
async function measureDeepPage(
  service: Target,
  token: string,
): Promise<NonNullable<DatabaseReport['deepPage']>> {
  const afterRow = Math.floor(scaleRows * 0.9);
  const authorization = `Bearer ${token}`;
  const aborted = new AbortController();
  const long = await fetch(`${service.url}/plants?limit=${afterRow}`, {
    headers: { authorization },
    signal: aborted.signal,
  });
  const link = long.headers.get('link') ?? '';
  aborted.abort();
  const after = /after=([A-Za-z0-9_-]+)>/.exec(link)?.[1];
  if (!after) throw new Error(`no next link after ${afterRow} plants: ${link}`);
  const page = (path: string): autocannon.Request[] => [
    { method: 'GET', path, headers: { authorization } },
  ];
  const deepPath = `/plants?limit=20&after=${after}`;
  const deepPage = await fetch(`${service.url}${deepPath}`, { headers: { authorization } });
  const names = ((await deepPage.json()) as Array<{ name: string }>).map((p) => p.name);
  if (names[0] !== `plant ${afterRow + 1}` || names.length !== 20) {
    throw new Error(`the page after plant ${afterRow} starts with ${names[0]}`);
  }
  await load(service, page(deepPath), warmup);
  const runs = await inTurns([() => load(service, page('/plants?limit=20'), duration)], () =>
    load(service, page(deepPath), duration),
  );
  return { afterRow, first: runs.sides[0], deep: runs.measured };
}

/** The prefix of the databases createDatabases makes, for PgBouncer's log. */
const BENCH_DATABASES = 'bench_';

async function benchDatabase(db: BenchKind, pgbouncer?: PgBouncer): Promise<DatabaseReport> {
  const databases = await createDatabases(
    db === 'sqlite' ? 'sqlite' : 'postgres',
    POSTGRES_ADMIN_URL,
    ['service', ...yardsticks],
  );
  // The servers' DATABASE_URL; the seeders stay on the direct one.
  const databaseUrl = (name: string) =>
    pgbouncer ? through(pgbouncer, databases.of[name].url) : databases.of[name].url;
  const servers: Server[] = [];
  const closeLast: Array<() => Promise<void>> = [];
  try {
    // Rate limiting on, as deployed, with a budget no bench run can spend: the bench sends
    // one owner far more than the default RATE_LIMIT_MAX a minute. Everything else runs as
    // deployed, request log and metrics included.
    const issuer = versusCaller ? await startIssuer(CALLERS[versusCaller]) : undefined;
    if (issuer) closeLast.push(() => issuer.close());
    const serviceEnv = { RATE_LIMIT_MAX: '10000000', ...issuer?.env, ...extraServiceEnv };
    const start = async (name: string) => {
      // Its database, and under --slow-flush-ms on SQLite the shim that slows and counts its flushes.
      const own = {
        DATABASE_URL: databaseUrl(name),
        ...(slowFlush && db === 'sqlite' ? slowFlush.envOf(name) : {}),
      };
      const yardstick = YARDSTICKS.find((y) => y.name === name);
      const server =
        name === 'service'
          ? await startServer(name, SERVICE, { ...serviceEnv, ...versusEnv, ...own }, [
              ...args['node-arg'],
              ...args['versus-node-arg'],
            ])
          : name === BASELINE
            ? await startServer(
                name,
                versusBuild ?? SERVICE,
                { ...serviceEnv, ...own },
                args['node-arg'],
              )
            : await startServer(
                name,
                (yardstick as Yardstick).script,
                {
                  ...(yardstick as Yardstick).env(serviceEnv),
                  ...(REFERENCES.includes(name) ? referenceEnv : {}),
                  ...own,
                },
                args['reference-node-arg'],
              );
      servers.push(server);
      return server;
    };
    const report: DatabaseReport = { db, scenarios: [], startup: {}, probes: {} };
    const targets: Target[] = [];
    for (const name of ['service', ...yardsticks]) {
      const server = await start(name);
      report.startup[name] = {
        startupMs: server.startupMs,
        startupCpuMs: server.startupCpuMs,
        idleRssBytes: await idleRss(server),
      };
      targets.push(await target(db, name, server, databases.of[name]));
    }
    report.probes = await probeAll(targets);
    for (const [name, problems] of Object.entries(report.probes)) {
      for (const problem of problems) log(`${db} ${name} probe: ${problem}`);
    }
    const [serviceTarget, ...yardstickTargets] = targets;
    if (issuer) await listAsJwtCaller(serviceTarget, yardstickTargets[0], issuer);
    const scenarios = args['scale-only'] ? [] : args.scenario.split(',');
    for (const scenario of SCENARIOS.filter((s) => scenarios.includes(s.name))) {
      report.scenarios.push(await measureScenario(db, scenario, serviceTarget, yardstickTargets));
    }
    if (pgbouncer) {
      log(`${db}: the scale part (big lists, memory) runs on the direct kinds only`);
    } else if (!args['skip-scale']) {
      const service = servers[0];
      log(`${db}: seeding ${scaleRows} plants for the scale list`);
      await databases.of.service.plants('scale', 1n, scaleRows);
      await databases.of.service.analyze();
      const plan = await databases.of.service.explainList('scale');
      const listOf = (owner: Owner): autocannon.Request[] => [
        {
          method: 'GET',
          path: '/plants?limit=20',
          headers: { authorization: `Bearer ${serviceTarget.tokens[owner]}` },
        },
      ];
      await load(serviceTarget, listOf('scale'), warmup);
      const runs = await inTurns([() => load(serviceTarget, listOf('list'), duration)], () =>
        load(serviceTarget, listOf('scale'), duration),
      );
      report.scale = { rows: scaleRows, small: runs.sides[0], large: runs.measured, plan };
      report.deepPage = await measureDeepPage(serviceTarget, serviceTarget.tokens.scale);
      if (args['scale-only']) return report;
      log(`${db}: seeding ${bigListRows} plants for the big list`);
      await databases.of.service.plants('big', 1n, bigListRows);
      // Twice: the first request after seeding, and once more; the target holds for both.
      report.bigList = [];
      for (let i = 0; i < 2; i++) {
        report.bigList.push(await measureBigList(service, serviceTarget.tokens.big, bigListRows));
      }
    }
    if (pgbouncer) {
      report.pgbouncer = { ...(await pgbouncer.logins(BENCH_DATABASES)), servers: servers.length };
    }
    return report;
  } finally {
    for (const server of servers.reverse()) await server.stop();
    for (const close of closeLast) await close();
    await databases.drop();
  }
}

async function measureScenario(
  db: BenchKind,
  scenario: Scenario,
  service: Target,
  others: Target[],
): Promise<ScenarioResult> {
  for (const t of [...others, service]) {
    await load(t, await scenario.prepare(t, warmup), warmup);
  }
  const turn = (t: Target) => async () => load(t, await scenario.prepare(t, duration), duration);
  const runs = await inTurns(others.map(turn), turn(service), (run, side) =>
    log(
      `${db} ${scenario.name} ${side < 0 ? 'service' : others[side].name}: ${run.rps.toFixed(0)} req/s, p99 ${run.p99} ms, ${run.cpuUs.toFixed(0)} µs CPU/request${prefixed(', database ', databaseCpu(db, [run]))}${run.flushes === undefined ? '' : `, ${run.flushes} flushes (${flushesPerOk(run).toFixed(2)} per 200)`}${run.failed ? `, ${run.failed} failed ${JSON.stringify(run.statuses)}` : ''}`,
    ),
  );
  return {
    db,
    scenario: scenario.name,
    yardsticks: Object.fromEntries(others.map((t, i) => [t.name, runs.sides[i]])),
    service: runs.measured,
  };
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
const DB_WIDTH = Math.max(...KINDS.map((kind) => kind.length));
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const times = (value: number) => `${value.toFixed(2)}`;

/**
 * The performance targets, service against a yardstick: the same-work
 * reference's throughput, p99 and CPU per request within a margin, and a
 * multiple of the conventional peer's throughput.
 */
function targetsOf(yardstick: string, scenario: string, ratio: ReturnType<typeof compare>) {
  if (yardstick === 'same-work') {
    return [
      { what: `req/s ${times(ratio.rps)} >= 0.85`, met: ratio.rps >= 0.85 },
      { what: `p99 ${times(ratio.p99)} <= 1.3`, met: ratio.p99 <= 1.3 },
      { what: `cpu ${times(ratio.cpu)} <= 1.2`, met: ratio.cpu <= 1.2 },
    ];
  }
  if (yardstick === 'conventional') {
    const least = scenario === 'create' ? 1.5 : 3;
    return [{ what: `req/s ${times(ratio.rps)} >= ${least}`, met: ratio.rps >= least }];
  }
  return [];
}

function printReport(reports: DatabaseReport[]): boolean {
  let targetsMet = true;
  const lines: string[] = [];
  const names = versus ? [BASELINE] : yardsticks;
  const column = (name: string) =>
    `${pad(`${name} req/s`, Math.max(10, name.length + 6))} ${pad('ratio', 5)} ${pad('p99 x', 5)} ${pad('cpu x', 5)}`;
  lines.push(
    `${'scenario'.padEnd(8)} ${'db'.padEnd(DB_WIDTH)} ${pad('svc req/s', 9)} ${pad('p50', 4)} ${pad('p99', 4)} ${pad('µs/req', 6)} | ${names.map(column).join(' | ')} | errors`,
  );
  const verdicts: string[] = [];
  let databaseShown = false;
  for (const report of reports) {
    for (const s of report.scenarios) {
      const svc = summary(s.service);
      const cells = names.map((name) => {
        const runs = s.yardsticks[name];
        const ratio = compare(runs, s.service);
        const checks = targetsOf(name, s.scenario, ratio);
        if (checks.length > 0 && !versus) {
          targetsMet &&= checks.every((c) => c.met);
          verdicts.push(
            `${s.scenario.padEnd(8)} ${s.db.padEnd(DB_WIDTH)} vs ${name}: ${checks.map((c) => `${c.what} ${c.met ? 'met' : 'NOT MET'}`).join(', ')}`,
          );
        }
        return `${pad(summary(runs).rps.toFixed(0), Math.max(10, name.length + 6))} ${pad(times(ratio.rps), 5)} ${pad(times(ratio.p99), 5)} ${pad(times(ratio.cpu), 5)}`;
      });
      const failed =
        svc.failed + names.reduce((n, name) => n + summary(s.yardsticks[name]).failed, 0);
      lines.push(
        `${s.scenario.padEnd(8)} ${s.db.padEnd(DB_WIDTH)} ${pad(svc.rps.toFixed(0), 9)} ${pad(svc.p50, 4)} ${pad(svc.p99, 4)} ${pad(median(s.service.map((r) => r.cpuUs)).toFixed(0), 6)} | ${cells.join(' | ')} | ${pad(failed, 6)}`,
      );
      const database = [
        ['service', s.service] as const,
        ...names.map((name) => [name, s.yardsticks[name]] as const),
      ].flatMap(([name, runs]) => {
        const figure = databaseCpu(s.db, runs);
        return figure === undefined ? [] : [`${name} ${figure}`];
      });
      if (database.length > 0) {
        databaseShown = true;
        lines.push(
          `${''.padEnd(8)} ${''.padEnd(DB_WIDTH)} the database's CPU per request: ${database.join('; ')}`,
        );
      }
      if (s.service[0]?.flushes !== undefined) {
        const what = s.scenario === 'create' ? 'create' : '200 answer';
        const sides = [['service', s.service], ...names.map((name) => [name, s.yardsticks[name]])];
        const flushes = (sides as Array<[string, Run[]]>).map(
          ([name, runs]) =>
            `${name} ${median(runs.map(oksPerSecond)).toFixed(0)} ${what}s/s, ${median(runs.map(flushesPerOk)).toFixed(2)} flushes per ${what}`,
        );
        lines.push(
          `${''.padEnd(8)} ${''.padEnd(DB_WIDTH)} flushes, each ${slowFlushMs} ms longer: ${flushes.join('; ')}`,
        );
      }
    }
  }
  lines.push(
    "(req/s, p50 and p99 (ms), µs/req (server CPU time per request): medians of the runs; ratio, p99 x and cpu x: service/yardstick, each service run against the mean of the yardstick's runs just before and after it, median of those)",
  );
  if (databaseShown) {
    lines.push(
      "(the database's CPU per request: of every PostgreSQL process on this machine, and PgBouncer's through it, during the side's runs, over its answered requests: medians of the runs; the servers' statements cost the database this, so a side's throughput on two shared cores follows its own CPU plus this)",
    );
  }
  if (slowFlush) {
    lines.push(
      "(flushes: the server process's fsync + fdatasync calls during a run over its 200 answers, and its 200 answers per second: medians of the runs)",
    );
  }
  if (verdicts.length > 0) {
    lines.push(
      '',
      'targets (same-work: req/s >= 0.85x, p99 <= 1.3x, cpu <= 1.2x; conventional: req/s >= 3x, create >= 1.5x):',
      ...verdicts,
    );
  }
  lines.push('');
  for (const report of reports) {
    lines.push(
      `${report.db}: start-up to first answer (CPU time until then) / idle RSS: ${Object.entries(
        report.startup,
      )
        .map(
          ([name, s]) =>
            `${name} ${s.startupMs.toFixed(0)} ms (${s.startupCpuMs.toFixed(0)} ms) / ${mib(s.idleRssBytes)}`,
        )
        .join(', ')}`,
    );
    const service = report.startup.service;
    const startupMet =
      service.startupMs <= STARTUP_TARGET_MS && service.idleRssBytes <= IDLE_RSS_TARGET_BYTES;
    targetsMet &&= startupMet;
    lines.push(
      `${report.db}: service start-up on Node ${process.version}, ${STARTED_AS} (target <= ${STARTUP_TARGET_MS} ms to the first answer, idle RSS <= ${mib(IDLE_RSS_TARGET_BYTES)}): ${startupMet ? 'met' : 'NOT MET'}`,
    );
    for (const [name, problems] of Object.entries(report.probes)) {
      lines.push(
        `${report.db}: probe of ${name}: ${problems.length === 0 ? 'every answer right' : problems.join('; ')}`,
      );
    }
    if (report.pgbouncer) {
      const p = report.pgbouncer;
      lines.push(
        `${report.db}: PgBouncer (transaction pooling): ${p.logins} client logins to ${p.databases} of the ${p.servers} servers' databases, ${p.poolerErrors} pooler errors; the scale part runs on the direct kinds only`,
      );
    }
    // b against a in req/s, the target a ratio of at least 0.90: the same cost.
    const sameCost = (what: string, a: Run[], b: Run[], extra = '') => {
      const ratio = compare(a, b).rps;
      targetsMet &&= ratio >= 0.9;
      const [sa, sb] = [summary(a), summary(b)];
      lines.push(
        `${report.db}: ${what}: ${sb.rps.toFixed(0)} vs ${sa.rps.toFixed(0)} req/s, p99 ${sb.p99.toFixed(1)} vs ${sa.p99.toFixed(1)} ms, ratio ${ratio.toFixed(2)} (target >= 0.90: ${ratio >= 0.9 ? 'met' : 'NOT MET'})${extra}`,
      );
    };
    if (report.scale) {
      const { rows, small, large, plan } = report.scale;
      sameCost(
        `list limit=20, ${rows} plants vs ${LISTED_PLANTS}`,
        small,
        large,
        `; plan: ${plan}`,
      );
    }
    if (report.deepPage) {
      const { afterRow, first, deep } = report.deepPage;
      sameCost(
        `list limit=20 after a cursor at plant ${afterRow} of ${scaleRows} vs the first page`,
        first,
        deep,
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

function pgBouncerInstalled(): boolean {
  try {
    accessSync(PGBOUNCER_PATH, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const reports: DatabaseReport[] = [];
  for (const kind of kinds) {
    if (kind !== 'sqlite' && !(await postgresReachable())) {
      log(`PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL}: its ${kind} part is skipped`);
      continue;
    }
    if (kind === 'pgbouncer' && !pgBouncerInstalled()) {
      log(
        `PgBouncer is not at ${PGBOUNCER_PATH} (Debian: apt-get install pgbouncer, or set PGBOUNCER_PATH): the pgbouncer part is skipped`,
      );
      continue;
    }
    log(`== ${kind}`);
    if (kind === 'pgbouncer') {
      // One for the run, in front of the server the databases are made on.
      const pgbouncer = await startPgBouncer(POSTGRES_ADMIN_URL);
      log(`pgbouncer: the servers reach PostgreSQL through PgBouncer at ${pgbouncer.url}`);
      try {
        reports.push(await benchDatabase(kind, pgbouncer));
      } finally {
        await pgbouncer.stop();
      }
    } else {
      reports.push(await benchDatabase(kind));
    }
  }
  const described = versus
    ? `versus: "${BASELINE}" is ${versusBuild ? `the build at ${versusBuild}` : 'the service itself'}, "svc" ${versusBuild ? 'this build' : 'the service'}${versusChanges.length > 0 ? ` with ${versusChanges.join(' ')}` : ''}`
    : YARDSTICKS.filter((y) => yardsticks.includes(y.name))
        .map((y) => `${y.name}: ${y.description}`)
        .join('\n');
  const viaPgBouncer = reports.some((r) => r.db === 'pgbouncer')
    ? "\npgbouncer rows: every server's DATABASE_URL through one PgBouncer (transaction pooling, its defaults); µs/req and cpu x count the servers' CPU, not PgBouncer's"
    : '';
  console.log(
    `\nPlant Store bench, ${new Date().toISOString()}, Node ${process.version}, ${cpus().length} cores, ${mib(totalmem())} memory; ${connections} connections, turns of ${duration} s (each yardstick ${rounds + 1}, service ${rounds}) after ${warmup} s of warm-up each${quick ? ' (quick)' : ''}${args['service-env'].length > 0 ? `; service environment: ${args['service-env'].join(' ')}` : ''}${slowFlush ? `; on SQLite every server's fsync and fdatasync ${slowFlushMs} ms longer (--slow-flush-ms)` : ''}${namedStatements ? '; the reference runs NAMED PostgreSQL statements (--reference-named-statements), the service unnamed ones' : ''}\n${described}${viaPgBouncer}\n`,
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
        versusBuild,
        referenceNamedStatements: namedStatements,
        slowFlushMs,
        reports,
        targetsMet,
      },
      null,
      2,
    ),
  );
  const runsOf = (s: ScenarioResult) => [...Object.values(s.yardsticks).flat(), ...s.service];
  const failed =
    reports.flatMap((r) => r.scenarios.flatMap(runsOf)).reduce((n, run) => n + run.failed, 0) +
    reports
      .flatMap((r) => [...(r.scale?.small ?? []), ...(r.scale?.large ?? [])])
      .reduce((n, run) => n + run.failed, 0) +
    reports.flatMap((r) => r.bigList ?? []).filter((b) => !b.valid).length;
  // A server that did not log in through PgBouncer measured PostgreSQL directly: a wrong answer too.
  const bypassed = reports.filter(
    (r) => r.pgbouncer && r.pgbouncer.databases < r.pgbouncer.servers,
  );
  for (const r of bypassed)
    log(`${r.db}: not every server's database was reached through PgBouncer`);
  const wrong = reports.flatMap((r) => Object.values(r.probes).flat()).length + bypassed.length;
  if (failed + wrong > 0) {
    console.error(`${failed} request(s) failed, ${wrong} wrong answer(s) in the probes`);
    process.exitCode = 1;
  }
}

await main();
