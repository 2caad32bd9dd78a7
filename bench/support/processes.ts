import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
} from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'node:http';
import { freePort } from './free-port.js';

export interface Server {
  name: string;
  child: ChildProcess;
  url: string;
  /** From spawn to the first answered request (a 401 from GET /plants). */
  startupMs: number;
  /** CPU time the server used until then (all its threads): steadier than startupMs on a busy machine. */
  startupCpuMs: number;
  output(): string;
  stop(): Promise<void>;
}

/** Answers a GET with its status, or rejects on a connection error. */
function getStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Node's runtime options as the Dockerfile and `npm run start:prod` run the
 * service, given to both servers so that they run on the same runtime.
 */
export const RUNTIME_NODE_OPTIONS = '--max-semi-space-size=64';

/**
 * The production artefact (`npm run build`; scripts/bundle-service.mjs): what the
 * container, `npm run start:prod`, the e2e tests of the built service and the bench start.
 */
export const SERVICE_ENTRY = 'dist/bundle/main.js';

/**
 * The V8 flags of the same command lines, which NODE_OPTIONS does not take
 * (see the Dockerfile for why this one): given to both servers too.
 */
export const RUNTIME_NODE_ARGS = [
  '--no-allocation-site-pretenuring',
  '--import=./dist/tracing/preload.js',
];

/** Node 22.1 added the compile cache (NODE_COMPILE_CACHE); Node 20 has none. */
export const COMPILE_CACHE_SUPPORTED = 'enableCompileCache' in module;

/** Where scripts/warm-compile-cache.mjs runs the service while it fills a cache. */
const WARM_PORT = 3996;

/** The cursor key of the servers a run starts. */
const BENCH_CURSOR_SECRET = 'bench-cursor-secret-0123456789abcdef';

/** The compile cache of each service command line, filled once per bench run. */
const compileCaches = new Map<string, string>();
process.once('exit', () => {
  for (const dir of compileCaches.values()) rmSync(dir, { recursive: true, force: true });
});
/**
 * NODE_COMPILE_CACHE for the service, filled by scripts/warm-compile-cache.mjs
 * as the image build fills the container's, so that start-up is measured as
 * the container starts; also for another build's bundle (--versus-build), so
 * that both sides of that comparison start alike. Nothing on a Node without a
 * compile cache (Node 20), nor for the yardsticks, which have no image.
 */
function compileCacheOf(
  script: string,
  env: Record<string, string>,
  nodeArgs: string[],
): Record<string, string> {
  const serviceBundle = resolve(script).endsWith(`/${SERVICE_ENTRY}`);
  if (!serviceBundle || !COMPILE_CACHE_SUPPORTED) return {};
  const args = [...RUNTIME_NODE_ARGS, ...nodeArgs, script];
  const key = args.join(' ');
  let dir = compileCaches.get(key);
  if (dir === undefined) {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-compile-cache-'));
    const warm = spawnSync(process.execPath, ['scripts/warm-compile-cache.mjs', ...args], {
      env: { ...env, NODE_COMPILE_CACHE: dir, WARM_PORT: String(WARM_PORT) },
      encoding: 'utf8',
    });
    if (warm.status !== 0) throw new Error(`filling the compile cache failed:\n${warm.stderr}`);
    compileCaches.set(key, dir);
  }
  return { NODE_COMPILE_CACHE: dir };
}

/** A program that runs the server's command line (valgrind), and how long a start may take then. */
export interface Launcher {
  command: string[];
  startTimeoutMs: number;
}

/**
 * Starts `node <script>` (under `launcher` when given) on a free port and
 * waits for its first answer (a 401 from GET /plants without a token):
 * start-up time is from spawn to that answer. Not read from the log, so that
 * any LOG_LEVEL works.
 *
 * The server's stdout and stderr go to a file, as a container's log does, not
 * to a pipe read by this process: this process also runs autocannon, and
 * reading the service's line per request would take CPU from the load
 * generator while the service is measured and not while the reference (no
 * line per request) is.
 */
export async function startServer(
  name: string,
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  launcher?: Launcher,
): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const runtimeEnv = {
    PATH: process.env.PATH ?? '',
    NO_COLOR: '1',
    NODE_ENV: 'production',
    NODE_OPTIONS: RUNTIME_NODE_OPTIONS,
    // Production requires one; every server of a run shares it, as instances would.
    CURSOR_SECRET: BENCH_CURSOR_SECRET,
    ...env,
  };
  const compileCache = compileCacheOf(script, runtimeEnv, nodeArgs);
  const log = openLog(name);
  const started = performance.now();
  const command = [process.execPath, ...RUNTIME_NODE_ARGS, ...nodeArgs, script];
  const [file, ...args] = launcher ? [...launcher.command, ...command] : command;
  const child = spawn(file, args, {
    env: { ...runtimeEnv, ...compileCache, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', log.fd, log.fd],
  });
  closeSync(log.fd);
  const output = () => tail(log.path, 20_000);
  let exited = false;
  child.once('exit', () => (exited = true));
  let status = 0;
  const fail = (why: string) => {
    const text = output();
    child.kill('SIGKILL');
    rmSync(log.dir, { recursive: true, force: true });
    return new Error(`${name} ${why}:\n${text}`);
  };
  while (status === 0) {
    if (exited) throw fail('exited');
    if (performance.now() - started > (launcher?.startTimeoutMs ?? 60_000)) {
      throw fail('did not start');
    }
    status = await getStatus(`${url}/plants`).catch(() => 0);
    if (status === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (status !== 401) throw fail(`answered GET /plants without a token with ${status}`);
  const startupMs = performance.now() - started;
  const startupCpuMs = cpuSecondsOf(child.pid!) * 1000;
  return {
    name,
    child,
    url,
    startupMs,
    startupCpuMs,
    output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const stopped = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await stopped;
        clearTimeout(timer);
      }
      rmSync(log.dir, { recursive: true, force: true });
    },
  };
}

function openLog(name: string): { dir: string; path: string; fd: number } {
  const dir = mkdtempSync(join(tmpdir(), `plant-store-bench-${name}-`));
  const path = join(dir, 'output.log');
  return { dir, path, fd: openSync(path, 'w') };
}

/** The last `bytes` bytes of a file (the log of a long run is large), or '' when it is gone. */
function tail(path: string, bytes: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, bytes));
    readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    return buffer.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A field of /proc/<pid>/status in bytes (VmRSS: now, VmHWM: peak since the last reset). */
export function memoryOf(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/**
 * CPU time (user + system) the process has used so far, in seconds, from
 * /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s).
 */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields are counted after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU time (user + system) so far, in seconds, of each process on the machine
 * whose command name is one of `names` (`postgres`: the server and its backends;
 * `pgbouncer`), by name and then by pid, in one walk of /proc; a name none
 * runs under here (a PostgreSQL elsewhere) has an empty map.
 */
export function cpuSecondsOfCommands(names: readonly string[]): Map<string, Map<number, number>> {
  const seconds = new Map(names.map((name) => [name, new Map<number, number>()]));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ofName = seconds.get(readFileSync(`/proc/${entry}/comm`, 'utf8').trimEnd());
      ofName?.set(Number(entry), cpuSecondsOf(Number(entry)));
    } catch {
      // Gone since the listing.
    }
  }
  return seconds;
}

/**
 * The CPU time the processes of `after` (cpuSecondsOfCommands) used since
 * `before`: one that started since counts from nothing; one that ended since
 * (an idle pool's connection, its backend gone) is left out with what it used
 * meanwhile, which for an idle one is next to nothing. Undefined when there
 * were none.
 */
export function cpuSecondsSince(
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>,
): number | undefined {
  if (after.size === 0) return undefined;
  let seconds = 0;
  for (const [pid, total] of after) seconds += total - (before.get(pid) ?? 0);
  return seconds;
}
