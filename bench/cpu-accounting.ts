/**
 * `npm run bench:accounting`: where each server's CPU time per request goes,
 * under the list load (GET /plants?limit=20, 32 connections), for the
 * reference, the floor, the service with its per-request features off, and
 * the service as deployed. Read with Linux `perf record` (CPU samples of every
 * thread of the server, not wall time: `node --cpu-prof` samples wall time,
 * so a function the OS preempted looks slower than it is) and summed by
 * where the code lives: a package, a folder of the app, V8, the kernel,
 * SQLite. The servers are measured in turns, as in `npm run bench`, and each
 * figure is µs of CPU per answered request over all turns.
 *
 * Not part of `npm run bench` or CI: it needs `perf` (Debian: linux-perf) and
 * a kernel that lets it sample (perf_event_paranoid <= 1, or root).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createDatabases, type BenchDatabases, type DatabaseKind } from './support/databases.js';
import { LISTED_PLANTS } from './support/scenarios.js';
import { parseSettings, POSTGRES_ADMIN_URL } from './support/settings.js';
import { startServer, type Server } from './support/processes.js';

const USAGE = `npm run bench:accounting [-- options]
  --db sqlite|postgres   (default sqlite)
  --rounds N             turns per server (default 3)
  --duration SECONDS     sampled seconds per turn (default 5), after 2 s of warm-up
  --variant K=V[,K=V]    one more column: the service as deployed with these settings changed
Prints µs of CPU per request by where the code lives, for the reference, the floor,
the service with LOG_LEVEL=warn, METRICS_ENABLED=false, RATE_LIMIT_ENABLED=false,
and the service as deployed.`;

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    variant: { type: 'string', multiple: true, default: [] },
    help: { type: 'boolean', default: false },
  },
});
if (args.help || !['sqlite', 'postgres'].includes(args.db)) {
  console.log(USAGE);
  process.exit(args.help ? 0 : 2);
}
try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
} catch {
  console.error('bench:accounting needs Linux perf on the PATH (Debian: apt install linux-perf)');
  process.exit(2);
}

/** perf's sampling rate (Hz of CPU time): a sample stands for 1/SAMPLE_HZ s of CPU. */
const SAMPLE_HZ = 1999;
const WARMUP_SECONDS = 2;
const db = args.db as DatabaseKind;
const rounds = Number(args.rounds);
const duration = Number(args.duration);

// As in `npm run bench`: rate limiting on, with a budget the load cannot spend.
const SERVICE_AS_DEPLOYED = { RATE_LIMIT_MAX: '10000000' };
/** The column the categories are sorted by: the service as deployed. */
const SORT_BY = 3;

const TARGETS: Array<{ name: string; script: string; env: Record<string, string> }> = [
  { name: 'reference', script: 'dist/bench/reference/server.js', env: {} },
  { name: 'floor', script: 'dist/bench/floor/main.js', env: {} },
  {
    name: 'service, features off',
    script: 'dist/main.js',
    env: { LOG_LEVEL: 'warn', METRICS_ENABLED: 'false', RATE_LIMIT_ENABLED: 'false' },
  },
  { name: 'service', script: 'dist/main.js', env: SERVICE_AS_DEPLOYED },
  ...args.variant.map((settings) => ({
    name: `service, ${settings}`,
    script: 'dist/main.js',
    env: { ...SERVICE_AS_DEPLOYED, ...parseSettings(settings.split(','), 'variant') },
  })),
];

interface Measured {
  name: string;
  server: Server;
  token: string;
  databases: BenchDatabases;
  samples: Map<string, number>;
  requests: number;
}

/** Where a sampled symbol's code lives (perf's dso and symbol columns). */
function category(dso: string, symbol: string): string {
  if (dso.startsWith('[JIT]')) {
    const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(symbol);
    if (dependency) return `js ${dependency[1]}`;
    const own = /dist\/(?:bench\/)?([^/]+)\//.exec(symbol);
    if (own) return `js app/${own[1]}`;
    const builtin = /node:(?:internal\/)?([a-z_]+)/.exec(symbol);
    return builtin ? `js node:${builtin[1]}` : 'js other';
  }
  if (dso.includes('kernel')) return 'kernel';
  if (dso.includes('better_sqlite3')) return 'SQLite (better-sqlite3)';
  if (/^(libc|libm|ld-linux|libstdc\+\+)/.test(dso)) return 'libc, libstdc++';
  if (dso === 'node') {
    if (/Heap|Scaveng|Mark|Sweep|Evacuat|Compactor|GCTracer/.test(symbol))
      return 'V8 garbage collector';
    if (symbol.startsWith('Builtins_')) return 'V8 builtins (calls, ICs, promises)';
    return 'V8 and Node C++ (runtime)';
  }
  return dso;
}

/** Samples per category in one perf.data file. */
function readSamples(file: string, into: Map<string, number>): void {
  const report = execFileSync(
    'perf',
    ['report', '-i', file, '--no-children', '--sort', 'dso,sym', '--stdio', '-F', 'sample,dso,sym'],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  for (const line of report.split('\n')) {
    const match = /^\s*(\d+)\s+(\S+(?: tid \d+)?)\s+\[.\]\s+(.*)$/.exec(line);
    if (!match) continue;
    const key = category(match[2], match[3]);
    into.set(key, (into.get(key) ?? 0) + Number(match[1]));
  }
}

async function turn(target: Measured, dir: string, round: number): Promise<void> {
  const requests: autocannon.Request[] = [
    {
      method: 'GET',
      path: '/plants?limit=20',
      headers: { authorization: `Bearer ${target.token}` },
    },
  ];
  const url = target.server.url;
  await autocannon({ url, connections: 32, duration: WARMUP_SECONDS, requests });
  const file = join(dir, `${target.name.replace(/\W+/g, '-')}-${round}.data`);
  const pid = String(target.server.child.pid);
  const perf = spawn(
    'perf',
    ['record', '-F', String(SAMPLE_HZ), '-p', pid, '-o', file, '--', 'sleep', String(duration)],
    { stdio: 'ignore' },
  );
  const exited = new Promise<number | null>((done) => perf.once('exit', done));
  // The load runs a second longer than perf samples, so the sampled window is all under load.
  const result = await autocannon({ url, connections: 32, duration: duration + 1, requests });
  const perfStatus = await exited;
  if (perfStatus !== 0) {
    throw new Error(`perf record exited with ${perfStatus}: is perf_event_paranoid <= 1?`);
  }
  if (result.errors + result.timeouts + result.non2xx > 0) {
    throw new Error(`${target.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  target.requests += result.requests.average * duration;
  readSamples(file, target.samples);
  rmSync(file, { force: true });
}

function report(measured: Measured[]): void {
  const perRequest = measured.map(
    (m) => new Map([...m.samples].map(([key, n]) => [key, (n / SAMPLE_HZ / m.requests) * 1e6])),
  );
  const total = perRequest.map((figures) => [...figures.values()].reduce((a, b) => a + b, 0));
  const keys = [...new Set(perRequest.flatMap((figures) => [...figures.keys()]))]
    .filter((key) => perRequest.some((figures) => (figures.get(key) ?? 0) >= 0.5))
    .sort((a, b) => (perRequest[SORT_BY].get(b) ?? 0) - (perRequest[SORT_BY].get(a) ?? 0));
  const widths = measured.map((m) => Math.max(m.name.length, 6) + 2);
  const row = (label: string, cells: string[]) =>
    console.log(label.padEnd(38) + cells.map((c, i) => c.padStart(widths[i])).join(''));
  console.log(
    `\nCPU µs per request, GET /plants?limit=20 on ${db}, ${rounds} turns of ${duration} s each:`,
  );
  row(
    '',
    measured.map((m) => m.name),
  );
  row(
    'total',
    total.map((t) => t.toFixed(1)),
  );
  row(
    '  x reference',
    total.map((t) => (t / total[0]).toFixed(2)),
  );
  for (const key of keys)
    row(
      key,
      perRequest.map((figures) => (figures.get(key) ?? 0).toFixed(1)),
    );
}

const dir = mkdtempSync(join(tmpdir(), 'plant-store-accounting-'));
const measured: Measured[] = [];
try {
  for (const target of TARGETS) {
    const databases = await createDatabases(db, POSTGRES_ADMIN_URL);
    const server = await startServer(
      target.name.replace(/\W+/g, '-'),
      resolve(target.script),
      { DATABASE_URL: databases.service.url, ...target.env },
      // JIT-compiled functions by name in perf's report (a map file in /tmp per process).
      ['--perf-basic-prof-only-functions'],
    );
    const m: Measured = {
      name: target.name,
      server,
      databases,
      token: '',
      samples: new Map(),
      requests: 0,
    };
    measured.push(m);
    m.token = await databases.service.token('list');
    await databases.service.plants('list', 1n, LISTED_PLANTS);
  }
  for (let round = 0; round < rounds; round++) {
    for (const m of measured) await turn(m, dir, round);
  }
  report(measured);
} finally {
  for (const m of measured) {
    await m.server.stop();
    await m.databases.drop();
    rmSync(`/tmp/perf-${m.server.child.pid}.map`, { force: true });
  }
  rmSync(dir, { recursive: true, force: true });
}
