/**
 * `npm run bench:fair-share`: what one owner's greedy lists cost another
 * owner. The built service (dist/bundle/main.js), on SQLite and then on
 * PostgreSQL, each time on a fresh database and in a fresh process: owner A
 * has 50,000 plants whose name and tag are 255 characters each (a full list is
 * about 26 MB of JSON), owner B has 20 ordinary plants; both are seeded
 * directly in the database, not over HTTP. autocannon measures B's
 * GET /plants?limit=20 (2 connections):
 *
 *   1. idle;
 *   2. loaded: A loops full lists (GET /plants, no limit, every body read to
 *      its end) from 8 connections, and opens 400 more full lists on raw
 *      sockets that it never reads (the request written, the socket paused
 *      after the status line and kept open). Recorded: B's p50 and p99, B's
 *      non-2xx answers (and 503s among them), the service's peak RSS (VmRSS
 *      sampled every 250 ms, and VmHWM reset at the phase's start where the
 *      kernel allows), how many of A's 400 unread lists were refused at once
 *      with a 429, and how many full lists A's loops got;
 *   3. flood: 64 connections from the same address send 63 KiB bodies that
 *      are invalid JSON, without a token, to POST /nope (each answered, then
 *      sent again), while B's list is measured again.
 *
 * Each for the service as shipped ("on": the defaults, FAIR_SHARE_MAX_IN_FLIGHT
 * at its default of 64, named) and, as the yardstick, the same service with
 * its protections switched off ("off": FAIR_SHARE_ENABLED=false, no per-owner
 * in-flight bound nor per-owner share of the PostgreSQL pool;
 * AUTH_REFUSAL_RATE=1000000, refusals never paced). Both run with rate limits
 * on as hostile-bodies.ts runs the service (RATE_LIMIT_ENABLED's default: the
 * pacing of refusals needs it), the per-owner request quota RATE_LIMIT_MAX
 * raised to its highest, 10,000,000 a minute, out of the reach of A's loops:
 * what refuses A is the in-flight bound, never the quota.
 *
 * A's loops and the flood run in processes of their own (as hostile-bodies.ts
 * runs its senders), so that their CPU is not counted in B's latency by the
 * measuring process. A loop that gets a refusal (a 429) asks again at once
 * unless FAIR_REFUSAL_BACKOFF_MS says otherwise.
 *
 * Prints a table per database and the goals for "on": B's loaded p50 within
 * 10 × idle and under 200 ms, peak RSS under 600 MiB, no 503 for B, and B's p50
 * under the flood within 3 × idle: PASS or FAIL each (the same for "off" in
 * parentheses). It is a measurement, not a test: exit code 0 whatever the
 * figures, 1 only when the bench itself broke (a service that did not start or
 * died, a seeding that failed, B answered with anything but a 200, a 429 or a
 * 503, a list of the wrong plants).
 *
 * Command line: --db sqlite|postgres (default: both, SQLite first).
 * PostgreSQL: a throwaway database per service on BENCH_POSTGRES_URL
 * (support/settings.ts), dropped at the end.
 *
 * Settings, from the environment:
 *   FAIR_SECONDS             each measurement of B's list (default 10)
 *   FAIR_WARMUP_SECONDS      B's list before the idle measurement, not counted (default 2)
 *   FAIR_SETTLE_SECONDS      at most this long for every unread list to get its status line
 *                            before B is measured under load (default 10)
 *   FAIR_PLANTS              A's plants (default 50000)
 *   FAIR_LOOPS               A's connections looping full lists (default 8)
 *   FAIR_UNREAD              A's full lists opened and never read (default 400)
 *   FAIR_FLOOD_CONNECTIONS   connections of the unauthenticated flood (default 64)
 *   FAIR_REFUSAL_BACKOFF_MS  how long one of A's loops waits after a refusal (default 0)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { Database } from './support/better-sqlite3.js';
import { createDatabases, type DatabaseKind, type Seeder } from './support/databases.js';
import { memoryOf, SERVICE_ENTRY, type Server, startServer } from './support/processes.js';
import { POSTGRES_ADMIN_URL } from './support/settings.js';

const SECONDS = Number(process.env.FAIR_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.FAIR_WARMUP_SECONDS ?? 2);
const SETTLE_SECONDS = Number(process.env.FAIR_SETTLE_SECONDS ?? 10);
const PLANTS = Number(process.env.FAIR_PLANTS ?? 50_000);
const LOOPS = Number(process.env.FAIR_LOOPS ?? 8);
const UNREAD = Number(process.env.FAIR_UNREAD ?? 400);
const FLOOD_CONNECTIONS = Number(process.env.FAIR_FLOOD_CONNECTIONS ?? 64);
const REFUSAL_BACKOFF_MS = Number(process.env.FAIR_REFUSAL_BACKOFF_MS ?? 0);

const OWNER_A = 'fair-share-a';
const OWNER_B = 'fair-share-b';
const TOKEN_A = 'pst_fair-share-owner-a-0123456789abcdefghijklmn';
/** B's list: its plants, all of them in one page. */
const B_PLANTS = 20;
const B_PATH = `/plants?limit=${B_PLANTS}`;
const B_CONNECTIONS = 2;
/** The longest name and tag the API takes. */
const LONG = 255;
/** 63 KiB: under the default body limit (64 KiB), so that only authentication refuses it. */
const FLOOD_BODY_BYTES = 63 * 1024;
const RSS_SAMPLE_MS = 250;
const MiB = 1024 * 1024;

/** The goals, for "on". */
const GOAL = { loadedRatio: 10, loadedMs: 200, rssMiB: 600, floodRatio: 3 };

type Mode = 'on' | 'off';

/**
 * Each mode's environment, beside what every service gets (measureService).
 * FAIR_SHARE_* are the service's names for the per-owner bound; a service
 * that does not know them ignores them (config/load-environment.ts).
 */
const MODES: Record<Mode, { title: string; env: Record<string, string> }> = {
  on: {
    title: 'as shipped (FAIR_SHARE_MAX_IN_FLIGHT=64, refusals paced)',
    env: { FAIR_SHARE_MAX_IN_FLIGHT: '64' },
  },
  off: {
    title: 'protections off (FAIR_SHARE_ENABLED=false, AUTH_REFUSAL_RATE=1000000)',
    env: { FAIR_SHARE_ENABLED: 'false', AUTH_REFUSAL_RATE: '1000000' },
  },
};

/** The bench broke: not a figure, a reason to stop with exit code 1. */
class BenchBroke extends Error {}

/** Milliseconds, as printed. */
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(0));

const log = (line: string) => void process.stderr.write(`[fair-share] ${line}\n`);

function count(counts: Record<string, number>, key: string, by = 1): void {
  counts[key] = (counts[key] ?? 0) + by;
}

/** "n × key" for each key, most first; "none" when empty. */
function tally(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? 'none' : entries.map(([key, n]) => `${n} × ${key}`).join(', ');
}

// ---------------------------------------------------------------- seeding

/**
 * A's plants, ids 1..count, in one statement: name "plant <id> xxx…" and tag
 * "tag <id> xxx…", each cut to 255 characters.
 */
async function seedLongPlants(url: string, owner: string, count: number): Promise<void> {
  const filler = 'x'.repeat(LONG);
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length), { timeout: 30_000 });
    try {
      db.prepare(
        `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
         INSERT INTO plants (owner, id, name, tag)
         SELECT ?, n, substr('plant ' || n || ' ' || ?, 1, ${LONG}),
                substr('tag ' || n || ' ' || ?, 1, ${LONG}) FROM g`,
      ).run(count, owner, filler, filler);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO plants (owner, id, name, tag)
       SELECT $1, n, substr('plant ' || n || ' ' || $2::text, 1, ${LONG}),
              substr('tag ' || n || ' ' || $2::text, 1, ${LONG})
       FROM generate_series(1, $3::bigint) AS n`,
      [owner, filler, count],
    );
  } finally {
    await client.end();
  }
}

/** The name of A's plant `id`, as seedLongPlants stored it. */
function longName(id: number): string {
  return `plant ${id} ${'x'.repeat(LONG)}`.slice(0, LONG);
}

/** One GET with a token: its status and body. */
async function get(url: string, token: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: await response.text() };
}

/** B's list, whole and right, or the bench is broken. */
async function checkListOfB(service: Server, token: string, when: string): Promise<void> {
  const { status, body } = await get(`${service.url}${B_PATH}`, token);
  if (status !== 200) throw new BenchBroke(`B's list ${when} answered ${status}: ${body}`);
  const plants = JSON.parse(body) as Array<{ name: string }>;
  const right =
    Array.isArray(plants) &&
    plants.length === B_PLANTS &&
    plants.every((plant, i) => plant.name === `plant ${i + 1}`);
  if (!right) throw new BenchBroke(`B's list ${when} is not B's ${B_PLANTS} plants`);
}

/** A's full list, once, read and checked: the seeding is what the bench says it is. */
async function checkFullListOfA(service: Server): Promise<number> {
  const { status, body } = await get(`${service.url}/plants`, TOKEN_A);
  if (status !== 200)
    throw new BenchBroke(`A's full list answered ${status}: ${body.slice(0, 200)}`);
  const plants = JSON.parse(body) as Array<{ name: string; tag?: string }>;
  const right =
    Array.isArray(plants) &&
    plants.length === PLANTS &&
    plants.every((plant, i) => plant.name === longName(i + 1) && plant.tag?.length === LONG);
  if (!right) throw new BenchBroke(`A's full list is not A's ${PLANTS} long plants`);
  return Buffer.byteLength(body);
}

// ---------------------------------------------------------------- B's list

interface Latency {
  p50: number;
  p99: number;
  requests: number;
  /** Answers by status, and connection errors and timeouts. */
  statuses: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
}

/** The `share` percentile (nearest rank) of `sorted` (ascending); 0 when empty. */
function percentile(sorted: number[], share: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))];
}

/**
 * B's list under autocannon; any status but 200, 429 and 503 breaks the bench.
 * Its percentiles are taken from each answer's time as autocannon reports it
 * (fractions of a millisecond; autocannon's own histogram keeps whole
 * milliseconds, too coarse for a list answered in under one), every answer
 * counted, a 429 or a 503 as well as a 200.
 */
async function measureB(service: Server, token: string, seconds: number): Promise<Latency> {
  const times: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${service.url}${B_PATH}`,
        headers: { authorization: `Bearer ${token}` },
        connections: B_CONNECTIONS,
        duration: seconds,
      },
      (error: unknown, done: autocannon.Result) =>
        error
          ? reject(
              error instanceof Error ? error : new Error('autocannon failed', { cause: error }),
            )
          : resolve(done),
    );
    instance.on('response', (_client, _status, _bytes, time) => void times.push(time));
  });
  const statuses: Record<string, number> = {};
  for (const [status, stats] of Object.entries(result.statusCodeStats ?? {})) {
    count(statuses, status, stats.count ?? 0);
  }
  const wrong = Object.keys(statuses).filter((status) => !['200', '429', '503'].includes(status));
  if (wrong.length > 0) {
    throw new BenchBroke(
      `B's list was answered ${tally(statuses)}: ${wrong.join(', ')} unexpected`,
    );
  }
  times.sort((x, y) => x - y);
  return {
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    requests: times.length,
    statuses,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

// ---------------------------------------------------------------- A's loops and the flood

/**
 * A process of looping clients: `connections` loops, each sends its request,
 * reads the whole answer, sends again; until told to stop, then it posts how
 * many answers of each status it got ("cut <status>": the body ended early;
 * "no answer": the connection ended first) and the bytes of their bodies. Told
 * nothing (its parent gone), it exits.
 */
const LOOPER = `
const { Agent, request } = require('node:http');
const [url, path, connections, token, bodyBytes, backoffMs] = process.argv.slice(1);
const agent = new Agent({ keepAlive: true, maxSockets: Number(connections) });
let body;
if (Number(bodyBytes) > 0) {
  body = Buffer.alloc(Number(bodyBytes), 'x');
  body.write('{"id": 1, "name": "', 0);
  body.write('"!', body.length - 2);
}
let stopped = false;
const statuses = {};
let bytes = 0;
const once = () => new Promise((resolve) => {
  const headers = {};
  if (token) headers.authorization = 'Bearer ' + token;
  if (body) Object.assign(headers, { 'content-type': 'application/json', 'content-length': body.length });
  const req = request(url + path, { method: body ? 'POST' : 'GET', headers, agent }, (res) => {
    res.on('data', (chunk) => { if (!stopped) bytes += chunk.length; });
    res.on('error', () => undefined);
    res.on('close', () => resolve(res.complete ? String(res.statusCode) : 'cut ' + res.statusCode));
  });
  // The service may answer and close before the whole body is sent.
  req.on('error', () => resolve('no answer'));
  req.end(body);
});
const loop = async () => {
  while (!stopped) {
    const status = await once();
    if (stopped) break;
    statuses[status] = (statuses[status] || 0) + 1;
    if (status !== '200' && Number(backoffMs) > 0) await new Promise((r) => setTimeout(r, Number(backoffMs)));
  }
};
const loops = Array.from({ length: Number(connections) }, loop);
process.on('disconnect', () => process.exit(0));
process.once('message', async () => {
  stopped = true;
  agent.destroy();
  await Promise.all(loops);
  process.send({ statuses, bytes }, () => process.exit(0));
});
`;

interface Looped {
  statuses: Record<string, number>;
  bytes: number;
}

interface Loopers {
  child: ChildProcess;
  stop(): Promise<Looped>;
}

function startLoopers(
  url: string,
  path: string,
  connections: number,
  token: string,
  bodyBytes: number,
): Loopers {
  const child = spawn(
    process.execPath,
    [
      '-e',
      LOOPER,
      url,
      path,
      String(connections),
      token,
      String(bodyBytes),
      String(REFUSAL_BACKOFF_MS),
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  return {
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new BenchBroke(
          `a looping client exited early (${child.exitCode ?? child.signalCode})`,
        );
      }
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const answer = new Promise<Looped>((resolve) =>
        child.once('message', (message) => resolve(message as Looped)),
      );
      child.send('stop');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const result = await Promise.race([answer, exited.then(() => undefined)]);
      await exited;
      clearTimeout(timer);
      if (!result) throw new BenchBroke('a looping client did not report');
      return result;
    },
  };
}

function kill(child: ChildProcess | undefined): void {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

// ---------------------------------------------------------------- A's unread lists

interface Unread {
  /** The status line's code of each socket that got one; "closed" / "error" without one. */
  outcomes(): Record<string, number>;
  /** Sockets with no outcome yet. */
  pending(): number;
  close(): void;
}

/**
 * `lists` full lists of A, each on a socket of its own: the request written,
 * the first bytes of the answer read for its status line, and then the socket
 * paused and kept open, never read further (the service's writes back up).
 */
function openUnread(url: string, lists: number): Unread {
  const { hostname, port } = new URL(url);
  const request =
    `GET /plants HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
    `Authorization: Bearer ${TOKEN_A}\r\nAccept: application/json\r\n\r\n`;
  const sockets: Socket[] = [];
  const outcomes: Record<string, number> = {};
  let decided = 0;
  for (let i = 0; i < lists; i++) {
    let outcome: string | undefined;
    const decide = (what: string) => {
      if (outcome !== undefined) return;
      outcome = what;
      decided += 1;
      count(outcomes, what);
    };
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(request));
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      const status = /^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1', 0, 12));
      decide(status ? status[1] : 'garbled');
    });
    socket.on('error', () => decide('error'));
    socket.on('close', () => decide('closed'));
    sockets.push(socket);
  }
  return {
    outcomes: () => ({ ...outcomes }),
    pending: () => lists - decided,
    close: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

// ---------------------------------------------------------------- the service's memory

/** The service's peak RSS from now until `stop`: VmRSS sampled, and VmHWM when it could be reset. */
function watchRss(pid: number): { stop(): number } {
  let hwm = false;
  try {
    // 5 resets the kernel's peak-RSS mark (VmHWM) to the current RSS (as support/big-list.ts does).
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    hwm = true;
  } catch {
    hwm = false;
  }
  const sample = () => {
    try {
      return memoryOf(pid, 'VmRSS');
    } catch {
      return 0; // the service is gone: its exit is reported by the phase
    }
  };
  let peak = sample();
  const timer = setInterval(() => (peak = Math.max(peak, sample())), RSS_SAMPLE_MS);
  return {
    stop: () => {
      clearInterval(timer);
      peak = Math.max(peak, sample());
      if (hwm) {
        try {
          peak = Math.max(peak, memoryOf(pid, 'VmHWM'));
        } catch {
          // gone
        }
      }
      return peak;
    },
  };
}

// ---------------------------------------------------------------- one service

interface Reading {
  fullListBytes: number;
  idle: Latency;
  loaded: Latency;
  rssBytes: number;
  /** The status of each unread list, when B's loaded measurement ended. */
  unread: Record<string, number>;
  /** Unread lists still without a status line when B's measurement began. */
  unreadPendingAtStart: number;
  loops: Looped;
  flood: Latency;
  flooders: Looped;
  /** The service's log lines (it logs at warn and above), by message. */
  logged: Record<string, number>;
}

function alive(service: Server, when: string): void {
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) {
    throw new BenchBroke(
      `the service died ${when} (${child.exitCode ?? child.signalCode}):\n${service.output()}`,
    );
  }
}

/** Its log lines (JSON, pino) by level and message, to report what the service complained of. */
function loggedLines(output: string): Record<string, number> {
  const lines: Record<string, number> = {};
  for (const line of output.split('\n')) {
    if (line.trim() === '') continue;
    let key = line.slice(0, 160);
    try {
      const entry = JSON.parse(line) as { level?: number | string; msg?: string; err?: unknown };
      key = `${String(entry.level)}: ${String(entry.msg).slice(0, 160)}`;
    } catch {
      // not JSON: the line as it is
    }
    count(lines, key);
  }
  return lines;
}

async function measureService(kind: DatabaseKind, mode: Mode, seeder: Seeder): Promise<Reading> {
  const service = await startServer(`fair-share-${kind}-${mode}`, SERVICE_ENTRY, {
    DATABASE_URL: seeder.url,
    BOOTSTRAP_TOKEN: TOKEN_A,
    BOOTSTRAP_OWNER: OWNER_A,
    LOG_LEVEL: 'warn',
    // The per-owner request quota out of reach (its highest): what refuses A is not it.
    RATE_LIMIT_MAX: '10000000',
    ...MODES[mode].env,
  });
  let loops: Loopers | undefined;
  let flood: Loopers | undefined;
  let unread: Unread | undefined;
  try {
    const pid = service.child.pid!;
    log(`${kind} ${mode}: service up in ${service.startupMs.toFixed(0)} ms; seeding`);
    const seeding = performance.now();
    const tokenB = await seeder.token(OWNER_B);
    await seeder.plants(OWNER_B, 1n, B_PLANTS);
    await seedLongPlants(seeder.url, OWNER_A, PLANTS);
    await seeder.analyze();
    log(`${kind} ${mode}: seeded in ${(performance.now() - seeding).toFixed(0)} ms`);
    await checkListOfB(service, tokenB, 'after seeding');
    const fullListBytes = await checkFullListOfA(service);

    // 1. Idle.
    await measureB(service, tokenB, WARMUP_SECONDS);
    const idle = await measureB(service, tokenB, SECONDS);
    alive(service, 'while B was measured idle');
    log(`${kind} ${mode}: idle p50 ${ms(idle.p50)} ms`);

    // 2. Loaded: A's loops, then its unread lists, then B.
    const rss = watchRss(pid);
    loops = startLoopers(service.url, '/plants', LOOPS, TOKEN_A, 0);
    await sleep(1000);
    unread = openUnread(service.url, UNREAD);
    const settleBy = performance.now() + SETTLE_SECONDS * 1000;
    while (unread.pending() > 0 && performance.now() < settleBy) await sleep(50);
    const unreadPendingAtStart = unread.pending();
    log(
      `${kind} ${mode}: unread lists ${tally(unread.outcomes())}` +
        (unreadPendingAtStart > 0 ? `, ${unreadPendingAtStart} without an answer yet` : ''),
    );
    const loaded = await measureB(service, tokenB, SECONDS);
    const unreadOutcomes = unread.outcomes();
    const pendingAtEnd = unread.pending();
    if (pendingAtEnd > 0) unreadOutcomes['no status line yet'] = pendingAtEnd;
    const rssBytes = rss.stop();
    alive(service, 'under A’s lists');
    unread.close();
    unread = undefined;
    const looped = await loops.stop();
    loops = undefined;
    log(`${kind} ${mode}: loaded p50 ${ms(loaded.p50)} ms, RSS ${(rssBytes / MiB).toFixed(0)} MiB`);
    // The service lets go of A's lists (their sockets are closed) before the next phase.
    await sleep(2000);
    alive(service, 'after A’s lists');
    await checkListOfB(service, tokenB, 'after A’s lists');

    // 3. The unauthenticated flood.
    flood = startLoopers(service.url, '/nope', FLOOD_CONNECTIONS, '', FLOOD_BODY_BYTES);
    await sleep(1000);
    const flooded = await measureB(service, tokenB, SECONDS);
    const flooders = await flood.stop();
    flood = undefined;
    alive(service, 'under the flood');
    await checkListOfB(service, tokenB, 'after the flood');
    log(`${kind} ${mode}: flood p50 ${ms(flooded.p50)} ms`);

    return {
      fullListBytes,
      idle,
      loaded,
      rssBytes,
      unread: unreadOutcomes,
      unreadPendingAtStart,
      loops: looped,
      flood: flooded,
      flooders,
      logged: loggedLines(service.output()),
    };
  } finally {
    unread?.close();
    kill(loops?.child);
    kill(flood?.child);
    await service.stop();
  }
}

// ---------------------------------------------------------------- the report

const ratio = (value: number, base: number) =>
  base > 0 ? `${(value / base).toFixed(1)}×` : value > 0 ? '∞×' : '1.0×';

function goals(reading: Reading): Array<[string, boolean]> {
  const { idle, loaded, flood, rssBytes } = reading;
  return [
    [
      `B's loaded p50 ≤ ${GOAL.loadedRatio} × idle and < ${GOAL.loadedMs} ms`,
      loaded.p50 <= GOAL.loadedRatio * idle.p50 && loaded.p50 < GOAL.loadedMs,
    ],
    [`peak RSS < ${GOAL.rssMiB} MiB`, rssBytes / MiB < GOAL.rssMiB],
    ["no 503 for B (under A's lists)", (loaded.statuses['503'] ?? 0) === 0],
    [
      `B's p50 under the flood ≤ ${GOAL.floodRatio} × idle`,
      flood.p50 <= GOAL.floodRatio * idle.p50,
    ],
  ];
}

function b(latency: Latency): string {
  const refused = latency.non2xx;
  return (
    `${refused} non-2xx (${latency.statuses['503'] ?? 0} × 503, ${latency.statuses['429'] ?? 0} × 429)` +
    (latency.errors > 0 ? `, ${latency.errors} errors (${latency.timeouts} timeouts)` : '')
  );
}

function report(kind: DatabaseKind, readings: Partial<Record<Mode, Reading>>): string {
  const modes = (['on', 'off'] as const).filter((mode) => readings[mode]);
  const column = (cell: (reading: Reading) => string) =>
    `| ${modes.map((mode) => cell(readings[mode]!)).join(' | ')} |`;
  const rows: Array<[string, (reading: Reading) => string]> = [
    [
      'B idle p50 / p99 (ms)',
      (r) => `${ms(r.idle.p50)} / ${ms(r.idle.p99)} (${r.idle.requests} req)`,
    ],
    ['B loaded p50 (× idle)', (r) => `${ms(r.loaded.p50)} (${ratio(r.loaded.p50, r.idle.p50)})`],
    ['B loaded p99 (ms)', (r) => `${ms(r.loaded.p99)} (${r.loaded.requests} req)`],
    ['B loaded answers', (r) => b(r.loaded)],
    ["B's 503s (loaded)", (r) => String(r.loaded.statuses['503'] ?? 0)],
    ['service peak RSS (MiB)', (r) => (r.rssBytes / MiB).toFixed(0)],
    [`A's ${UNREAD} unread lists: 429s`, (r) => String(r.unread['429'] ?? 0)],
    [`A's ${UNREAD} unread lists: all`, (r) => tally(r.unread)],
    [
      `A's ${LOOPS} loops: full lists`,
      (r) =>
        `${r.loops.statuses['200'] ?? 0} (${(r.loops.bytes / MiB).toFixed(0)} MiB read; ${tally(r.loops.statuses)})`,
    ],
    ['B flood p50 (× idle)', (r) => `${ms(r.flood.p50)} (${ratio(r.flood.p50, r.idle.p50)})`],
    ['B flood p99 (ms) / answers', (r) => `${ms(r.flood.p99)} / ${b(r.flood)}`],
    [`the flood's answers`, (r) => tally(r.flooders.statuses)],
  ];
  const lines = [
    `\n## ${kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: A ${PLANTS} plants of 255-character name and tag (a full list: ${(
      (readings.on ?? readings.off)!.fullListBytes / MiB
    ).toFixed(1)} MiB); B GET ${B_PATH}, ${B_CONNECTIONS} connections, ${SECONDS} s each\n`,
    `| | ${modes.map((mode) => `${mode}: ${MODES[mode].title}`).join(' | ')} |`,
    `| --- |${' --- |'.repeat(modes.length)}`,
    ...rows.map(([title, cell]) => `| ${title} ${column(cell)}`),
  ];
  if (readings.on) {
    const offGoals = readings.off ? goals(readings.off) : undefined;
    lines.push('', `Goals for "on" (${kind}):`);
    for (const [i, [goal, met]] of goals(readings.on).entries()) {
      const yardstick = offGoals ? ` (off: ${offGoals[i][1] ? 'PASS' : 'FAIL'})` : '';
      lines.push(`  ${met ? 'PASS' : 'FAIL'}  ${goal}${yardstick}`);
    }
  }
  for (const mode of modes) {
    const pending = readings[mode]!.unreadPendingAtStart;
    if (pending > 0) {
      lines.push(
        `  note (${mode}): ${pending} unread lists had no status line after ${SETTLE_SECONDS} s, when B's loaded measurement began`,
      );
    }
    const logged = Object.entries(readings[mode]!.logged).sort((x, y) => y[1] - x[1]);
    if (logged.length === 0) {
      lines.push(`  the service's log (${mode}): nothing at warn or above`);
    } else {
      lines.push(`  the service's log (${mode}, warn and above):`);
      for (const [line, n] of logged.slice(0, 8)) lines.push(`    ${n} × ${line}`);
    }
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { db: { type: 'string' } } });
  const kinds: DatabaseKind[] =
    values.db === undefined ? ['sqlite', 'postgres'] : [values.db as DatabaseKind];
  for (const kind of kinds) {
    if (kind !== 'sqlite' && kind !== 'postgres') {
      throw new BenchBroke(`--db: sqlite or postgres, not ${String(kind)}`);
    }
  }
  const started = performance.now();
  const bundle = readFileSync(SERVICE_ENTRY, 'utf8');
  const knowsFairShare = bundle.includes('FAIR_SHARE_ENABLED');
  console.log(
    `# Fair share between owners (Node ${process.version}; ${UNREAD} unread lists, ${LOOPS} looping, flood of ${FLOOD_CONNECTIONS} × ${FLOOD_BODY_BYTES / 1024} KiB)`,
  );
  if (!knowsFairShare) {
    console.log(
      `\nNOTE: the built service (${SERVICE_ENTRY}) does not know FAIR_SHARE_ENABLED nor FAIR_SHARE_MAX_IN_FLIGHT: ` +
        'it ignores them, so "on" and "off" differ here only in AUTH_REFUSAL_RATE.',
    );
  }
  for (const kind of kinds) {
    const databases = await createDatabases(kind, POSTGRES_ADMIN_URL, ['fair_on', 'fair_off']);
    const readings: Partial<Record<Mode, Reading>> = {};
    try {
      readings.on = await measureService(kind, 'on', databases.of.fair_on);
      readings.off = await measureService(kind, 'off', databases.of.fair_off);
    } finally {
      await databases.drop();
    }
    console.log(report(kind, readings));
  }
  console.log(`\n(${((performance.now() - started) / 1000).toFixed(0)} s in all)`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof BenchBroke ? `the bench broke: ${error.message}` : error);
    process.exit(1);
  },
);
