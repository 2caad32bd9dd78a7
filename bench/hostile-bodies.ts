/**
 * `npm run bench:hostile-bodies`: what unauthenticated clients sending large
 * bodies cost an authenticated caller. The built service (dist/bundle/main.js) on a
 * fresh SQLite file; autocannon lists 200 plants with a valid token, first
 * alone, then while two clients loop on 1 MiB bodies without a token that are
 * invalid JSON at their end (were they parsed, a 400: never a failed
 * authentication, so never locked out). The service runs with a body limit
 * above 1 MiB, so that only the order of authentication and body reading
 * decides whether those bodies are read. Prints the list's p50 and p99, idle
 * and under that traffic, and their ratio (the goal: p99 within 2 × idle),
 * for the service as configured by default and, as the yardstick, for the
 * same service with its refusals never held back (AUTH_REFUSAL_RATE past
 * anything the senders reach).
 *
 * Settings, from the environment:
 *   HOSTILE_SECONDS      each measurement's duration (default 15)
 *   HOSTILE_CONNECTIONS  the list's concurrent connections (default 4)
 *   HOSTILE_SENDERS      clients sending 1 MiB bodies (default 2)
 *   HOSTILE_SENDERS_NICE the senders' process's niceness (default 0; 19: they
 *                        take a core only when the service and the measuring
 *                        client leave one, which shows what of the slowdown is
 *                        theirs to pay on a 2-core machine that runs all three)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { cpuSecondsOf, SERVICE_ENTRY, startServer } from './support/processes.js';

const SECONDS = Number(process.env.HOSTILE_SECONDS ?? 15);
const CONNECTIONS = Number(process.env.HOSTILE_CONNECTIONS ?? 4);
const SENDERS = Number(process.env.HOSTILE_SENDERS ?? 2);
const SENDERS_NICE = Number(process.env.HOSTILE_SENDERS_NICE ?? 0);
const TOKEN = 'pst_hostile-bodies-0123456789abcdefghijklmnopqrs';
const LISTED = 200;
/** A JSON object of 1 MiB whose last byte makes it invalid. */
const HOSTILE_BODY_BYTES = 1024 * 1024;

interface Latency {
  p50: number;
  p99: number;
  requests: number;
  /** CPU seconds the service spent meanwhile. */
  serviceCpu: number;
  /** CPU seconds this process (autocannon, the measuring client) spent meanwhile. */
  clientCpu: number;
}

function cpuTotal(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1e6;
}

async function measureList(url: string, pid: number): Promise<Latency> {
  const cpuBefore = cpuSecondsOf(pid);
  const clientBefore = process.cpuUsage();
  const result = await autocannon({
    url: `${url}/plants?limit=${LISTED}`,
    headers: { authorization: `Bearer ${TOKEN}` },
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`the list failed: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return {
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    serviceCpu: cpuSecondsOf(pid) - cpuBefore,
    clientCpu: cpuTotal(process.cpuUsage(clientBefore)),
  };
}

/**
 * The senders, in a process of their own: in this one (even in a worker
 * thread) their CPU would be counted in the list's latency, measuring the
 * bench rather than the service. Each loops: send the body without a token,
 * wait for the answer (or the connection's end), again; until told to stop,
 * then it posts how many answers of each status it got (0: none, the
 * connection closed or reset first).
 */
const SENDER = `
const { request } = require('node:http');
const [url, senders, size] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
const body = Buffer.alloc(size, 'x');
body.write('{"id": 1, "name": "', 0);
body.write('"!', size - 2);
let stopped = false;
const statuses = {};
const once = () => new Promise((resolve) => {
  const req = request(url + '/plants', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': size },
  }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
  // The service may answer and close before the whole body is sent.
  req.on('error', () => resolve(0));
  req.end(body);
});
const loop = async () => {
  while (!stopped) {
    const status = await once();
    statuses[status] = (statuses[status] || 0) + 1;
  }
};
const loops = Array.from({ length: senders }, loop);
process.once('message', async () => {
  stopped = true;
  await Promise.all(loops);
  process.send(statuses, () => process.exit(0));
});
`;

/** The senders' process, started; `stop` ends it and gives its answers' statuses and its CPU seconds. */
function startSenders(url: string): {
  stop(): Promise<{ statuses: Record<string, number>; cpu: number }>;
} {
  const child = spawn(
    process.execPath,
    ['-e', SENDER, url, String(SENDERS), String(HOSTILE_BODY_BYTES)],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  if (SENDERS_NICE !== 0) setPriority(child.pid!, SENDERS_NICE);
  return {
    stop: async () => {
      const statuses = new Promise<Record<string, number>>((resolve) =>
        child.once('message', (message) => resolve(message as Record<string, number>)),
      );
      // Read when told to stop: what it spent while the list was measured.
      const cpu = cpuSecondsOf(child.pid!);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send('stop');
      const result = await statuses;
      await exited;
      return { statuses: result, cpu };
    },
  };
}

function total(statuses: Record<string, number>): number {
  return Object.values(statuses).reduce((sum, count) => sum + count, 0);
}

/** "n × status" for each status the senders got (0: the connection closed without an answer). */
function answers(statuses: Record<string, number>): string {
  return Object.entries(statuses)
    .map(([status, count]) => `${count} × ${status}`)
    .join(', ');
}

/** One service's figures: the list idle and under the senders, and what the senders got. */
interface Reading {
  idle: Latency;
  loaded: Latency;
  during: { statuses: Record<string, number>; cpu: number };
  /** The senders alone: their answers, and the service's CPU seconds meanwhile. */
  alone: { statuses: Record<string, number>; cpu: number; serviceCpu: number };
}

/** Starts the built service with `env` on a fresh SQLite file, seeds the list, and measures it. */
async function measureService(env: Record<string, string>): Promise<Reading> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-hostile-bodies-'));
  const service = await startServer('service', SERVICE_ENTRY, {
    DATABASE_URL: `sqlite:${join(dir, 'plants.sqlite')}`,
    BOOTSTRAP_TOKEN: TOKEN,
    BODY_LIMIT_BYTES: String(2 * 1024 * 1024),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '10000000',
    ...env,
  });
  try {
    for (let id = 1; id <= LISTED; id++) {
      const response = await fetch(`${service.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, name: `plant ${id}` }),
      });
      if (response.status !== 200) throw new Error(`seeding answered ${response.status}`);
    }
    const pid = service.child.pid!;
    await measureList(service.url, pid); // warm-up
    const idle = await measureList(service.url, pid);
    const senders = startSenders(service.url);
    const loaded = await measureList(service.url, pid);
    const during = await senders.stop();
    // The senders alone: what each refused body costs the service, with no list to share its CPU with.
    const alone = startSenders(service.url);
    const cpuBefore = cpuSecondsOf(pid);
    await sleep(SECONDS * 1000);
    const serviceCpu = cpuSecondsOf(pid) - cpuBefore;
    return { idle, loaded, during, alone: { ...(await alone.stop()), serviceCpu } };
  } finally {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(title: string, { idle, loaded, during, alone }: Reading): string {
  const refusedAlone = total(alone.statuses);
  return [
    title,
    `  idle:                                  p50 ${idle.p50} ms, p99 ${idle.p99} ms (${idle.requests} requests, service CPU ${idle.serviceCpu.toFixed(1)} s, client CPU ${idle.clientCpu.toFixed(1)} s)`,
    `  ${SENDERS} clients sending 1 MiB bodies:        p50 ${loaded.p50} ms, p99 ${loaded.p99} ms (${loaded.requests} requests, service CPU ${loaded.serviceCpu.toFixed(1)} s, client CPU ${loaded.clientCpu.toFixed(1)} s)`,
    `  p99 under that traffic / idle p99:      ${(loaded.p99 / idle.p99).toFixed(2)} (goal: at most 2)`,
    `  the senders' answers meanwhile:        ${answers(during.statuses)} (${(total(during.statuses) / SECONDS).toFixed(0)}/s; their process's CPU ${during.cpu.toFixed(1)} s)`,
    `  the senders alone:                     ${answers(alone.statuses)} (${(refusedAlone / SECONDS).toFixed(0)}/s; their process's CPU ${alone.cpu.toFixed(1)} s)`,
    `  service CPU, senders alone:            ${(alone.serviceCpu / SECONDS).toFixed(2)} of a core (${((alone.serviceCpu / refusedAlone) * 1000).toFixed(3)} ms per refusal; a list request idle: ${((idle.serviceCpu / idle.requests) * 1000).toFixed(3)} ms)`,
  ].join('\n');
}

async function main(): Promise<void> {
  const header = `GET /plants?limit=${LISTED}, ${CONNECTIONS} connections, ${SECONDS} s each (senders' niceness ${SENDERS_NICE}).`;
  // The service as it ships: past AUTH_REFUSAL_RATE refusals a second, each comes late.
  const paced = await measureService({});
  // The yardstick: the same service with refusals never held back, what two
  // looping clients cost it when it answers them as fast as they ask.
  const unpaced = await measureService({ AUTH_REFUSAL_RATE: '1000000' });
  console.log(
    [
      header,
      report('The service as configured by default (refusals paced per address):', paced),
      report('The same, refusals never held back (AUTH_REFUSAL_RATE=1000000):', unpaced),
    ].join('\n'),
  );
}

await main();
