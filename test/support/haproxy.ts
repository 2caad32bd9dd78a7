import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { access, constants, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { freePort } from '../../bench/support/free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './eventually.js';

/** Debian's haproxy package (2.6 on Debian 12). */
const HAPROXY_PATH = process.env.HAPROXY_PATH ?? '/usr/sbin/haproxy';

/** Whether this machine has HAProxy (CI installs Debian's package). */
export const haproxyInstalled = (): boolean => existsSync(HAPROXY_PATH);

export interface Balancer {
  url: string;
  /**
   * Resolves once HAProxy's health checks have marked the server of `ports[index]`
   * UP (taking new connections) or DOWN, as its statistics page reports.
   */
  waitForServer(index: number, state: 'UP' | 'DOWN', timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * HAProxy in front of service instances the way kube-proxy or a cloud load
 * balancer at layer 4 stands in front of pods: TCP mode (a keep-alive
 * connection stays on its instance), new connections only to instances whose
 * /health/ready answers 200, checked every 0.5 s, and no retries.
 */
export async function startBalancer(ports: readonly number[]): Promise<Balancer> {
  await access(HAPROXY_PATH, constants.X_OK).catch(() => {
    throw new Error(`HAProxy is not at ${HAPROXY_PATH} (Debian: apt-get install haproxy)`);
  });
  const port = await freePort();
  const statsPort = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'plant-store-haproxy-'));
  const config = [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode tcp',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  retries 0',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend instances',
    'backend instances',
    '  balance roundrobin',
    '  option httpchk GET /health/ready',
    '  http-check expect status 200',
    '  default-server inter 500 fall 1 rise 1',
    ...ports.map((p, i) => `  server instance${i} 127.0.0.1:${p} check`),
    // Where the test reads what the checks concluded: /;csv lists each server's status.
    'frontend stats',
    '  mode http',
    `  bind 127.0.0.1:${statsPort}`,
    '  stats enable',
    '  stats uri /',
  ].join('\n');
  const configFile = join(dir, 'haproxy.cfg');
  await writeFile(configFile, `${config}\n`);
  const log = await open(join(dir, 'haproxy.log'), 'w');
  // -db: in the foreground, as a child of the test; -W would fork a master.
  const child = spawn(HAPROXY_PATH, ['-db', '-f', configFile], {
    stdio: ['ignore', log.fd, log.fd],
  });
  await log.close();
  const exited = new Promise<void>((resolve) =>
    child.once('close', () => resolve()).once('error', () => resolve()),
  );
  let running = true;
  void exited.then(() => (running = false));
  const killOnExit = () => child.kill();
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    if (running) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  /** The status HAProxy gives the server of ports[index] now (UP, DOWN, "UP 1/2", …). */
  const serverStatus = async (index: number): Promise<string | undefined> => {
    const csv = await (await fetch(`http://127.0.0.1:${statsPort}/;csv`)).text();
    const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n');
    const columns = header.split(',');
    const [proxy, server, status] = ['pxname', 'svname', 'status'].map((c) => columns.indexOf(c));
    const row = rows
      .map((line) => line.split(','))
      .find((cells) => cells[proxy] === 'instances' && cells[server] === `instance${index}`);
    return row?.[status];
  };
  const waitForServer = async (index: number, state: 'UP' | 'DOWN', timeoutMs = 20_000) => {
    let seen: string | undefined;
    await eventually(
      async () => (seen = await serverStatus(index)) === state,
      () => `HAProxy lists instance${index} as ${seen}, not ${state}`,
      timeoutMs,
    );
  };
  try {
    await eventually(
      async () => {
        if (!running) throw new Error('HAProxy exited');
        try {
          return (await fetch(`${url}/health/ready`)).status === 200;
        } catch {
          return false; // not up yet
        }
      },
      'no request passed to a ready instance',
      10_000,
      100,
    );
  } catch (error) {
    const tail = await readFile(join(dir, 'haproxy.log'), 'utf8').catch(() => '');
    await stop();
    throw new Error(
      `HAProxy did not pass a request to a ready instance (${(error as Error).message}):\n${tail}`,
    );
  }
  return { url, waitForServer, stop };
}
