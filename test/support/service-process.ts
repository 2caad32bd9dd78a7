import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { SERVICE_ENTRY } from '../../bench/support/processes.js';
import { TEST_CURSOR_SECRET } from './cursors.js';

const MAIN = resolve(SERVICE_ENTRY);
const TOKEN_CLI = resolve('dist/token.main.js');

/**
 * The Node options of the container's command line (the Dockerfile's CMD;
 * runtime-flags.e2e-spec.ts): a V8 flag and the tracing preload.
 */
export const RUNTIME_NODE_ARGS = [
  '--no-allocation-site-pretenuring',
  '--import=./dist/tracing/preload.js',
];

/** The same with the preload's path made absolute: a test runs the service in a directory of its own. */
const NODE_ARGS = RUNTIME_NODE_ARGS.map((arg) => arg.replace('=./dist/', `=${resolve('dist')}/`));

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  output(): string;
}

/**
 * Runs the built service exactly as the container does (`node <flags> dist/bundle/main.js`),
 * in a directory of its own so that no local .env leaks in. It waits for the
 * "Listening on" line, an info line: LOG_LEVEL must stay at info or below.
 */
export async function startService(
  cwd: string,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  const child = spawn(process.execPath, [...NODE_ARGS, MAIN], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      NO_COLOR: '1',
      HOST: '127.0.0.1',
      PORT: '0',
      RATE_LIMIT_ENABLED: 'false',
      // No load balancer to wait for: a suite that tests the drain sets it.
      SHUTDOWN_DRAIN_MS: '0',
      CURSOR_SECRET: TEST_CURSOR_SECRET,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${output}`));
    });
  });
  child.removeAllListeners('exit');
  return { child, url, output: () => output };
}

/**
 * Runs the service until it exits by itself, for start-up failures; or, with
 * `script`, another entry point of the build (e.g. `dist/migrate.main.js`, the
 * migrations job) the way the container would.
 */
export function runServiceToExit(
  cwd: string,
  env: Record<string, string>,
  script = SERVICE_ENTRY,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [...NODE_ARGS, resolve(script)], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      NO_COLOR: '1',
      CURSOR_SECRET: TEST_CURSOR_SECRET,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolveExit) => child.on('exit', (code) => resolveExit({ code, output })));
}

/** SIGKILL, then waits for the exit; returns at once when the process is already gone. */
export async function killHard(service: ServiceProcess): Promise<void> {
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
  child.kill('SIGKILL');
  await exited;
}

/** Runs the token command line as `npm run -s token` does, and returns what it printed. */
export function tokenCli(args: string[], env: Record<string, string>): Promise<ExitResult> {
  return runToExit(process.execPath, [TOKEN_CLI, ...args], process.cwd(), {
    PATH: process.env.PATH ?? '',
    ...env,
  });
}

/** What a command run to its exit printed, and its exit code. */
export interface ExitResult {
  argv: string[];
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` until it exits, collecting what it prints. */
export function runToExit(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<ExitResult> {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done, fail) => {
    child.on('error', fail);
    child.on('close', (code) => done({ argv: [command, ...args], code, stdout, stderr }));
  });
}
