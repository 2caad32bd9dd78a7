import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';

export interface Server {
  name: string;
  child: ChildProcess;
  url: string;
  /** From spawn to the first answered request (a 401 from GET /plants). */
  startupMs: number;
  output(): string;
  stop(): Promise<void>;
}

/** Answers a GET with its status, or rejects on a connection error. */
export function getStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
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

/** Starts `node <script>` with PORT=0 and waits for "Listening on <url>" and a first answer. */
export async function startServer(
  name: string,
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<Server> {
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: {
      PATH: process.env.PATH ?? '',
      NO_COLOR: '1',
      NODE_ENV: 'production',
      NODE_OPTIONS: RUNTIME_NODE_OPTIONS,
      HOST: '127.0.0.1',
      PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      const match = /Listening on (http:\/\/[\d.:]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}:\n${output}`));
    });
  });
  child.removeAllListeners('exit');
  const status = await getStatus(`${url}/plants`);
  if (status !== 401) throw new Error(`${name}: GET /plants without a token answered ${status}`);
  const startupMs = performance.now() - started;
  return {
    name,
    child,
    url,
    startupMs,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A field of /proc/<pid>/status in bytes (VmRSS: now, VmHWM: peak since the last reset). */
export function memoryOf(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}
