/**
 * Instructions per request: the main thread of the service (dist/bundle/main.js) under valgrind's
 * callgrind, which counts the instructions a thread runs. Unlike req/s and CPU time, the count
 * hardly moves with the machine's load: two counts of one build, requests sent one at a time,
 * differ by well under one per cent (BENCHMARKS.md, "Instructions per request"). So a change of a
 * per cent or two, which a run of `npm run bench` cannot tell from its noise (±0.1), shows here.
 * It counts instructions, not their cost: a cache miss is one.
 *
 *   npm run bench:instructions [-- --scenario list|create] [--db postgres|sqlite]
 *     [--versus-build PATH] [--yardsticks same-work,floor] [--service-env KEY=VALUE]
 *     [--connections N] [--requests N] [--warmup N] [--by-file] [--quick]
 *
 * With --yardsticks, the bench's yardsticks (bench/support/yardsticks.ts) are counted the same way,
 * with the settings `npm run bench` gives them, and each count is set beside the service's: where a
 * ratio of req/s moves by ±0.07 between runs, this one says how much work the service does beside
 * a server that does the same (the load generator, the database and the kernel left out).
 *
 * Each build (this one, and with --versus-build another build's bundle) runs on a fresh database
 * of its own, seeded as the bench seeds it (bench/support/scenarios.ts), under
 * `valgrind --tool=callgrind --instr-atstart=no`: it starts and takes its warm-up requests
 * uncounted (valgrind's own start and V8's compilation are not the request's), then vgdb turns
 * counting on, the measured requests go, and vgdb dumps the counts. Reported: the main thread's
 * instructions per answered request; the compiler and collector threads are apart and left out.
 * valgrind makes the server many times slower: a count of two builds takes about two minutes.
 *
 * With --by-file, each count is also split by source file (bench/support/instruction-profile.ts):
 * the server runs with V8's perf map, which names the code callgrind counts.
 *
 * `--quick` is CI's smoke run: a few hundred requests, to check that the count is taken.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createDatabases, type DatabaseKind } from './support/databases.js';
import { SERVICE_ENTRY, startServer } from './support/processes.js';
import {
  CALLER_CONTEXT,
  chargeToSources,
  parseCallgrind,
  readPerfMap,
  removeEndedPerfMaps,
  sourceGroup,
  sourceMapOf,
} from './support/instruction-profile.js';
import { SCENARIOS, seedOwners, type Target } from './support/scenarios.js';
import { parseSettings, POSTGRES_ADMIN_URL } from './support/settings.js';
import { YARDSTICKS } from './support/yardsticks.js';

const USAGE = `npm run bench:instructions [-- options]
  --scenario list|create   what is counted (default list: GET /plants?limit=20 of 200 plants)
  --db postgres|sqlite     the database (default postgres)
  --versus-build PATH      also count another build's bundle, e.g. /tmp/before/dist/bundle/main.js
  --yardsticks same-work,bare,floor,conventional
                           also count these servers of \`npm run bench\`, each beside the service
  --service-env KEY=VALUE  start each build with a setting changed, e.g. RATE_LIMIT_ENABLED=false
  --connections N          concurrent connections (default 1: requests one at a time)
  --warmup N --requests N  uncounted and counted requests (default 6000 and 2000)
  --by-file                also tell where each count goes, by source file (V8's perf map names
                           the compiled code; builtins are charged to their callers)
  --quick                  CI's smoke run: 300 and 200`;

/**
 * vgdb finds the server's valgrind through pipes named after USER and HOST; the server runs
 * with HOST=127.0.0.1 (its listen address), so vgdb is given the same two.
 */
const VGDB_ENV = { HOST: '127.0.0.1', USER: process.env.USER ?? 'bench' };

/**
 * V8 writes a map of the code it compiles, which names the code callgrind counts (--by-file);
 * its event log, which the perf map turns on, goes nowhere rather than to an isolate-*.log here.
 */
const PERF_MAP_ARGS = [
  '--perf-basic-prof',
  '--interpreted-frames-native-stack',
  '--logfile=/dev/null',
  '--no-logfile-per-isolate',
];

/** How many source files --by-file lists: the service's dearest, and each yardstick's. */
const BY_FILE_ROWS = 25;

/** What is counted: a build of the service, or a yardstick, with its settings. */
interface Counted {
  build: string;
  script: string;
  env: Record<string, string>;
}

interface Count {
  build: string;
  instructions: number;
  answered: number;
  /** With --by-file: the instructions by source file. */
  sources?: Map<string, number>;
}

/** Runs a callgrind monitor command (`instrumentation on`, `dump`) in the server's valgrind. */
function monitor(prefix: string, pid: number, command: string): void {
  const result = spawnSync('vgdb', [`--vgdb-prefix=${prefix}`, `--pid=${pid}`, command], {
    env: { ...process.env, ...VGDB_ENV },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (result.status !== 0) {
    throw new Error(`vgdb ${command} failed (${result.status}): ${result.stderr}${result.stdout}`);
  }
}

/** The main thread's dump (valgrind's thread 1, file `….<dump>-01`) and its instructions (Ir). */
function mainThreadDump(dir: string): { text: string; instructions: number } {
  const file = readdirSync(dir).find((name) => /^callgrind\.out\.\d+\.1-01$/.test(name));
  if (!file) {
    throw new Error(`no dump of the main thread in ${dir}: ${readdirSync(dir).join(', ')}`);
  }
  const text = readFileSync(join(dir, file), 'utf8');
  const totals = /^(?:summary|totals): (\d+)/m.exec(text);
  if (!totals) throw new Error(`no instruction total in ${file}`);
  return { text, instructions: Number(totals[1]) };
}

/** The dump's instructions by source file (instruction-profile.ts), from the server's perf map. */
function bySource(dump: string, pid: number, script: string): Map<string, number> {
  const profile = parseCallgrind(dump, readPerfMap(readFileSync(`/tmp/perf-${pid}.map`, 'utf8')));
  const maps = sourceMapOf(script);
  return chargeToSources(profile, (name) => sourceGroup(name, maps));
}

/** Sends `amount` requests and returns how many were answered with 2xx; any other answer fails. */
async function send(
  url: string,
  requests: autocannon.Request[],
  amount: number,
  connections: number,
): Promise<number> {
  const result = await autocannon({ url, connections, amount, requests, timeout: 120 });
  const failed = result.errors + result.timeouts + result.non2xx;
  if (failed > 0) {
    throw new Error(
      `${failed} of ${amount} requests failed: ${JSON.stringify(result.statusCodeStats)}`,
    );
  }
  return result['2xx'];
}

async function count(
  { build, script, env }: Counted,
  kind: DatabaseKind,
  scenarioName: string,
  settings: { connections: number; warmup: number; requests: number; byFile: boolean },
): Promise<Count> {
  const scenario = SCENARIOS.find((s) => s.name === scenarioName);
  if (!scenario) throw new Error(`no scenario ${scenarioName}`);
  const databases = await createDatabases(kind, POSTGRES_ADMIN_URL, [build]);
  const seeder = databases.of[build];
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-instructions-'));
  const started = Date.now();
  const prefix = join(dir, 'vgdb');
  try {
    const server = await startServer(
      build,
      script,
      { DATABASE_URL: seeder.url, ...env, ...VGDB_ENV },
      settings.byFile ? PERF_MAP_ARGS : [],
      {
        command: [
          'valgrind',
          '--tool=callgrind',
          '--instr-atstart=no',
          '--separate-threads=yes',
          // V8 writes the code it compiles into memory that it then runs.
          '--smc-check=all-non-file',
          '--vgdb=yes',
          ...(settings.byFile ? [`--separate-callers=${CALLER_CONTEXT}`] : []),
          `--vgdb-prefix=${prefix}`,
          `--callgrind-out-file=${join(dir, 'callgrind.out.%p')}`,
        ],
        startTimeoutMs: 600_000,
      },
    );
    try {
      const tokens = await seedOwners(seeder);
      const target: Target = {
        name: build,
        url: server.url,
        pid: server.child.pid!,
        seeder,
        tokens,
        runs: 0,
      };
      const pid = target.pid;
      await send(
        target.url,
        await scenario.prepare(target, 0),
        settings.warmup,
        settings.connections,
      );
      const requests = await scenario.prepare(target, 0);
      monitor(prefix, pid, 'instrumentation on');
      const answered = await send(target.url, requests, settings.requests, settings.connections);
      monitor(prefix, pid, 'dump');
      const dump = mainThreadDump(dir);
      const counted = { build, instructions: dump.instructions, answered };
      if (!settings.byFile) return counted;
      // Its perf map read once it has exited: none of it is left in a buffer then.
      await server.stop();
      return { ...counted, sources: bySource(dump.text, pid, script) };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (settings.byFile) removeEndedPerfMaps(started);
    await databases.drop();
  }
}

async function main(): Promise<void> {
  const { values: options } = parseArgs({
    options: {
      scenario: { type: 'string', default: 'list' },
      db: { type: 'string', default: 'postgres' },
      'versus-build': { type: 'string' },
      'service-env': { type: 'string', multiple: true, default: [] },
      yardsticks: { type: 'string', default: '' },
      connections: { type: 'string', default: '1' },
      warmup: { type: 'string' },
      requests: { type: 'string' },
      quick: { type: 'boolean', default: false },
      'by-file': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (options.help) {
    console.log(USAGE);
    return;
  }
  if (
    !['list', 'create'].includes(options.scenario) ||
    !['postgres', 'sqlite'].includes(options.db)
  ) {
    throw new Error(`--scenario list|create, --db postgres|sqlite\n\n${USAGE}`);
  }
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    throw new Error('valgrind is not installed (Debian: apt-get install valgrind)');
  }
  const settings = {
    connections: Number(options.connections),
    warmup: Number(options.warmup ?? (options.quick ? 300 : 6000)),
    requests: Number(options.requests ?? (options.quick ? 200 : 2000)),
    byFile: options['by-file'],
  };
  if (
    ![settings.connections, settings.warmup, settings.requests].every(
      (n) => Number.isInteger(n) && n > 0,
    )
  ) {
    throw new Error(
      `--connections, --warmup and --requests take whole numbers above 0\n\n${USAGE}`,
    );
  }
  // As `npm run bench` runs them: a quota no count can spend.
  const serviceEnv = {
    RATE_LIMIT_MAX: '10000000',
    ...parseSettings(options['service-env'], 'service-env'),
  };
  const builds: Counted[] = [{ build: 'service', script: SERVICE_ENTRY, env: serviceEnv }];
  const versusBuild = options['versus-build'];
  if (versusBuild)
    builds.push({ build: 'baseline', script: resolve(versusBuild), env: serviceEnv });
  for (const name of options.yardsticks.split(',').filter(Boolean)) {
    const yardstick = YARDSTICKS.find((y) => y.name === name);
    if (!yardstick) throw new Error(`no yardstick ${name}\n\n${USAGE}`);
    builds.push({ build: name, script: yardstick.script, env: yardstick.env(serviceEnv) });
  }
  console.log(
    `Instructions of the main thread per ${options.scenario} (${options.db}), ` +
      `${settings.requests} requests on ${settings.connections} connection(s) after ${settings.warmup} uncounted, ` +
      `Node ${process.version}` +
      `${options['service-env'].length > 0 ? `, with ${options['service-env'].join(' ')}` : ''}:`,
  );
  const counts: Count[] = [];
  for (const counted of builds) {
    const result = await count(counted, options.db as DatabaseKind, options.scenario, settings);
    counts.push(result);
    console.log(
      `  ${counted.build.padEnd(12)} ${thousandsPer(result.instructions, result.answered)} ` +
        `thousand (${result.instructions} over ${result.answered} answers; ${counted.script})`,
    );
  }
  const per = (c: Count) => c.instructions / c.answered;
  for (const other of counts.slice(1)) {
    console.log(`  service / ${other.build}: ${(per(counts[0]) / per(other)).toFixed(4)}`);
  }
  if (settings.byFile) printBySource(counts);
}

/** Instructions per answered request, in thousands, as the count and its table print them. */
function thousandsPer(instructions: number, answered: number): string {
  return (instructions / answered / 1000).toFixed(1);
}

/**
 * The --by-file table: thousand instructions per request by source file, one column per count,
 * for the files dearest in any count. Fails when the charges do not add up to the count, or when
 * none of the service's own files was named (no perf map read): a table that cannot be trusted.
 */
function printBySource(counts: Count[]): void {
  const rows = new Set<string>();
  for (const { build, instructions, sources } of counts) {
    if (!sources) throw new Error(`no profile of ${build}`);
    const charged = [...sources.values()].reduce((sum, cost) => sum + cost, 0);
    if (Math.abs(charged - instructions) > instructions * 0.001) {
      throw new Error(`${build}: ${charged} instructions charged of ${instructions} counted`);
    }
    const dearest = [...sources].sort((a, b) => b[1] - a[1]).slice(0, BY_FILE_ROWS);
    for (const [group] of dearest) rows.add(group);
  }
  const own = [...counts[0].sources!.keys()].filter((group) => group.startsWith('src/'));
  if (own.length === 0) throw new Error("the service's profile names none of its own files");
  const perRequest = (count: Count, group: string) =>
    thousandsPer(count.sources!.get(group) ?? 0, count.answered);
  console.log(
    `\nThousand instructions per request by source file (what has none charged to its callers):`,
  );
  console.log(`  ${'file'.padEnd(44)} ${counts.map((c) => c.build.padStart(12)).join(' ')}`);
  const order = [...rows].sort(
    (a, b) => (counts[0].sources!.get(b) ?? 0) - (counts[0].sources!.get(a) ?? 0),
  );
  const row = (label: string, cost: (count: Count) => string) =>
    console.log(
      `  ${label.slice(0, 44).padEnd(44)} ${counts.map((c) => cost(c).padStart(12)).join(' ')}`,
    );
  for (const group of order) row(group, (count) => perRequest(count, group));
  console.log('  in all:');
  for (const [label, kind] of KINDS_OF_SOURCE) {
    row(label, (count) => {
      let sum = 0;
      for (const [group, cost] of count.sources!) if (kindOfSource(group) === kind) sum += cost;
      return thousandsPer(sum, count.answered);
    });
  }
}

type SourceKind = 'own' | 'node' | 'package' | 'native';

/** The subtotals under the --by-file table. */
const KINDS_OF_SOURCE: Array<[string, SourceKind]> = [
  ["the server's own code (src/, bench/)", 'own'],
  ["Node's own JavaScript (node:…)", 'node'],
  ['packages (node_modules)', 'package'],
  ['[native]', 'native'],
];

function kindOfSource(group: string): SourceKind {
  if (group === '[native]') return 'native';
  if (group.startsWith('node:')) return 'node';
  if (group.startsWith('src/') || group.startsWith('bench/')) return 'own';
  return 'package';
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
