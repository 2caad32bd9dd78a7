/**
 * Load soak with a leak check: `npm run soak`.
 *
 * Runs the built service (`node dist/bundle/main.js`, as the container does) on a
 * fresh database, drives it with autocannon over many keep-alive connections
 * with a mix of operations, and samples the service's heap (V8 heap and
 * external memory) after a forced garbage collection every second. It fails (exit code 1) when any request
 * failed (a connection error, a timeout, an unexpected status) or when the
 * heap grew by more than the allowed share between the end of the warm-up and
 * the end of the run.
 *
 * Each connection repeats: create a plant with a new id (200), list 100 plants
 * (200), replay the same create (200), list every plant (200, streamed: the
 * owner has more than one page of them), delete the plant (204).
 *
 * Settings, from the environment:
 *   SOAK_SECONDS         duration of the load (default 60; CI runs 12)
 *   SOAK_CONNECTIONS     concurrent connections (default 32)
 *   SOAK_WARMUP_SECONDS  first seconds not counted for the leak check (default a fifth, at least 3)
 *   SOAK_MAX_GROWTH      largest heap growth allowed after warm-up (default 0.10, 10 %)
 *   SOAK_DATABASE_URL    the database (default: a new SQLite file in a temporary directory);
 *                        a PostgreSQL database must exist and should be empty
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SERVICE_ENTRY } from './support/processes.js';
import autocannon from 'autocannon';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 32);
const WARMUP = Number(process.env.SOAK_WARMUP_SECONDS ?? Math.max(3, Math.round(SECONDS / 5)));
const MAX_GROWTH = Number(process.env.SOAK_MAX_GROWTH ?? 0.1);
/** More than one list page (1,000), so that the full list is streamed. */
const SEEDED_PLANTS = 1200;
const TOKEN = 'pst_soak-token-0123456789abcdefghijklmnopqrstuv';
const MAIN = resolve(SERVICE_ENTRY);

/**
 * Loaded into the service with --import: answers the soak's "heap?" over the
 * IPC channel with the memory that JavaScript holds after a full collection:
 * the V8 heap plus external memory (Buffers live there). Nothing else changes.
 */
const HEAP_PROBE = `data:text/javascript,${encodeURIComponent(`
if (process.send) {
  process.on('message', (message) => {
    if (message !== 'heap?') return;
    globalThis.gc();
    const { heapUsed, external, rss } = process.memoryUsage();
    process.send({ heapUsed: heapUsed + external, rss });
  });
  process.channel.unref();
}`)}`;

interface HeapSample {
  second: number;
  heapUsed: number;
  rss: number;
}

interface Service {
  child: ChildProcess;
  url: string;
  output: string[];
}

async function startService(cwd: string, databaseUrl: string): Promise<Service> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  const child = spawn(process.execPath, ['--expose-gc', '--import', HEAP_PROBE, MAIN], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      NO_COLOR: '1',
      NODE_ENV: 'production',
      CURSOR_SECRET: 'soak-cursor-secret-0123456789abcdef',
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: databaseUrl,
      BOOTSTRAP_TOKEN: TOKEN,
      // The rate limiter stays on, so that its counters are part of the leak
      // check, with a ceiling this one client cannot reach.
      RATE_LIMIT_MAX: '10000000',
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // Keep the last lines only: a service that logs every request would fill memory here.
  const output: string[] = [];
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start:\n${output.join('')}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (output.length > 200) output.shift();
      const match = /Listening on (http:\/\/\S+)/.exec(output.join(''));
      if (match) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output.join('')}`)));
  });
  return { child, url, output };
}

function heapOf(child: ChildProcess): Promise<{ heapUsed: number; rss: number }> {
  return new Promise((resolveHeap, reject) => {
    const timer = setTimeout(() => reject(new Error('the heap probe did not answer')), 10_000);
    child.once('message', (message: { heapUsed: number; rss: number }) => {
      clearTimeout(timer);
      resolveHeap(message);
    });
    child.send('heap?');
  });
}

async function seed(url: string): Promise<void> {
  const ids = Array.from({ length: SEEDED_PLANTS }, (_, i) => -1 - i);
  const workers = Array.from({ length: 8 }, async () => {
    for (let id = ids.pop(); id !== undefined; id = ids.pop()) {
      const response = await fetch(`${url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, name: `seeded ${id}`, tag: 'soak' }),
      });
      if (response.status !== 200) throw new Error(`seeding answered ${response.status}`);
    }
  });
  await Promise.all(workers);
}

interface CycleContext {
  id?: number;
}

/** One cycle of the mix, per connection; autocannon repeats it with a fresh context. */
function mix(wrong: { count: number; examples: string[] }): autocannon.Request[] {
  let nextId = 1;
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const expect = (status: number) => (actual: number, body: string) => {
    if (actual === status) return;
    // autocannon counts the non-2xx ones; this counts a success of the wrong kind.
    if (actual < 300) wrong.count += 1;
    if (wrong.examples.length < 5) wrong.examples.push(`${actual} ${body.slice(0, 200)}`);
  };
  const create = (request: autocannon.Request, context: object) => {
    const cycle = context as CycleContext;
    cycle.id ??= nextId++;
    return { ...request, body: JSON.stringify({ id: cycle.id, name: `plant ${cycle.id}` }) };
  };
  return [
    { method: 'POST', path: '/plants', headers, setupRequest: create, onResponse: expect(200) },
    { method: 'GET', path: '/plants?limit=100', headers, onResponse: expect(200) },
    { method: 'POST', path: '/plants', headers, setupRequest: create, onResponse: expect(200) },
    { method: 'GET', path: '/plants', headers, onResponse: expect(200) },
    {
      method: 'DELETE',
      path: '/plants/0',
      headers,
      setupRequest: (request, context) => ({
        ...request,
        path: `/plants/${(context as CycleContext).id}`,
      }),
      onResponse: expect(204),
    },
  ];
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<number> {
  const cwd = await mkdtemp(join(tmpdir(), 'plant-store-soak-'));
  const databaseUrl = process.env.SOAK_DATABASE_URL ?? `sqlite:${join(cwd, 'soak.sqlite')}`;
  const service = await startService(cwd, databaseUrl);
  try {
    await seed(service.url);
    console.log(
      `soak: ${SECONDS} s, ${CONNECTIONS} connections, warm-up ${WARMUP} s, ` +
        `${databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL'}, ${SEEDED_PLANTS} plants seeded`,
    );

    const wrong = { count: 0, examples: [] as string[] };
    const samples: HeapSample[] = [];
    const started = Date.now();
    const sampler = setInterval(() => {
      heapOf(service.child).then(
        (heap) => samples.push({ second: (Date.now() - started) / 1000, ...heap }),
        () => undefined,
      );
    }, 1000);
    const result = await autocannon({
      url: service.url,
      connections: CONNECTIONS,
      duration: SECONDS,
      timeout: 10,
      requests: mix(wrong),
    });
    clearInterval(sampler);

    const failed = result.errors + result.timeouts + result.non2xx + wrong.count;
    const afterWarmup = samples.filter((sample) => sample.second >= WARMUP);
    const baseline = median(afterWarmup.slice(0, 3).map((sample) => sample.heapUsed));
    const final = median(afterWarmup.slice(-3).map((sample) => sample.heapUsed));
    const growth = (final - baseline) / baseline;
    const rss = samples.map((sample) => sample.rss);
    const alive = service.child.exitCode === null && service.child.signalCode === null;
    const ready = alive && (await fetch(`${service.url}/health/ready`)).status === 200;

    console.log(
      [
        `requests:  ${result.requests.total} in ${result.duration} s (${Math.round(result.requests.average)}/s), ` +
          `latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`,
        `failed:    ${failed} (connection errors ${result.errors}, timeouts ${result.timeouts}, ` +
          `non-2xx ${result.non2xx}, unexpected 2xx ${wrong.count})`,
        `heap:      ${mib(baseline)} after warm-up, ${mib(final)} at the end: ` +
          `${(growth * 100).toFixed(1)} % (allowed ${(MAX_GROWTH * 100).toFixed(0)} %), ${afterWarmup.length} samples`,
        `rss:       ${mib(Math.min(...rss))} .. ${mib(Math.max(...rss))}`,
        `service:   ${ready ? 'up and ready' : 'NOT READY'}`,
      ].join('\n'),
    );
    for (const example of wrong.examples) console.log(`  unexpected: ${example}`);

    const problems: string[] = [];
    if (result.requests.total === 0) problems.push('no request was answered');
    if (failed > 0) problems.push(`${failed} requests failed`);
    if (afterWarmup.length < 4) problems.push('too few heap samples after warm-up');
    if (!(growth <= MAX_GROWTH)) problems.push(`the heap grew ${(growth * 100).toFixed(1)} %`);
    if (!ready) problems.push('the service is not ready after the run');
    console.log(problems.length === 0 ? 'soak: PASS' : `soak: FAIL: ${problems.join('; ')}`);
    if (problems.length > 0 && !alive) console.log(service.output.join(''));
    return problems.length === 0 ? 0 : 1;
  } finally {
    const exited = new Promise((resolveExit) => service.child.once('exit', resolveExit));
    if (service.child.kill('SIGKILL')) await exited;
    await rm(cwd, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
