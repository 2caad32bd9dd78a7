import { spawn } from 'node:child_process';
import { access, constants, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

/** Debian's pgbouncer package (1.18 on Debian 12). */
export const PGBOUNCER_PATH = process.env.PGBOUNCER_PATH ?? '/usr/sbin/pgbouncer';

export interface PgBouncer {
  /** The admin URL with PgBouncer's host and port: the same user and database. */
  url: string;
  /** What its log says so far about the databases whose names start with `prefix`. */
  logins(prefix: string): Promise<PgBouncerLogins>;
  stop(): Promise<void>;
}

export interface PgBouncerLogins {
  /** Client logins to those databases (each client connection logs in once). */
  logins: number;
  /** The distinct databases among them. */
  databases: number;
  /** Every error it answered a client with, whatever the database. */
  poolerErrors: number;
}

export interface PgBouncerOptions {
  /**
   * When stopped, print the test run's line: how many of the suites'
   * connections (databases plant_store_test_*) reached it, and how many it
   * refused. The bench prints its own from logins().
   */
  report?: boolean;
}

/**
 * Starts a PgBouncer in front of the PostgreSQL at adminUrl, in transaction
 * pooling mode and otherwise with its defaults, so that the service under
 * test (the e2e suites' PgBouncer pass, the bench's pgbouncer kind) meets
 * PgBouncer as a production deployment would. Rejects (with the end of its
 * log) when it is not installed or does not answer a query.
 */
export async function startPgBouncer(
  adminUrl: string,
  options: PgBouncerOptions = {},
): Promise<PgBouncer> {
  await access(PGBOUNCER_PATH, constants.X_OK).catch(() => {
    throw new Error(
      `PgBouncer is not at ${PGBOUNCER_PATH} (Debian: apt-get install pgbouncer, or set PGBOUNCER_PATH)`,
    );
  });
  const admin = new URL(adminUrl);
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), 'plant-store-pgbouncer-'));
  const server = [
    `host=${admin.hostname.replace(/^\[|\]$/g, '')}`,
    `port=${admin.port || 5432}`,
    `user=${decodeURIComponent(admin.username || 'postgres')}`,
    ...(admin.password ? [`password=${decodeURIComponent(admin.password)}`] : []),
  ].join(' ');
  const config = [
    '[databases]',
    // Any database name a client asks for, on the one server: each suite (bench server) makes its own.
    `* = ${server}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    // Clients are not authenticated; PgBouncer logs in to the server as the user above.
    'auth_type = any',
    'pool_mode = transaction',
    // Every suite's apps and helpers at once; the default (100) is a production size.
    'max_client_conn = 1000',
    // Per database and user: above the pool of one app (DB_POOL_SIZE, 10 by default).
    'default_pool_size = 20',
    // PgBouncer refuses to run as root; it drops to this user once its config is read.
    ...(process.getuid?.() === 0 ? ['user = nobody'] : []),
  ].join('\n');
  const configFile = join(dir, 'pgbouncer.ini');
  await writeFile(configFile, `${config}\n`);

  // It logs to stderr: an inherited descriptor is writable whoever it runs as (no logfile or pidfile).
  const logFile = join(dir, 'pgbouncer.log');
  const log = await open(logFile, 'w');
  const child = spawn(PGBOUNCER_PATH, [configFile], { stdio: ['ignore', log.fd, log.fd] });
  await log.close();
  // A failure to start is reported by the wait below, with the log.
  const exited = new Promise<void>((resolve) =>
    child.once('close', resolve).once('error', resolve),
  );
  let running = true;
  void exited.then(() => (running = false));
  // A run stopped without its teardown must not leave the pooler listening.
  const killOnExit = () => child.kill();
  process.once('exit', killOnExit);

  const stop = async () => {
    process.off('exit', killOnExit);
    if (running) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };

  const url = new URL(adminUrl);
  url.host = `127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new pg.Client({
      connectionString: url.toString(),
      connectionTimeoutMillis: 1000,
    });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return {
        url: url.toString(),
        logins: (prefix) => logins(logFile, prefix),
        stop: options.report ? () => reportLogins(logFile).then(stop) : stop,
      };
    } catch (error) {
      if (!running || Date.now() > deadline) {
        const tail = (await readFile(logFile, 'utf8').catch(() => '')).trim().split('\n').slice(-5);
        await stop();
        throw new Error(
          `PgBouncer (${PGBOUNCER_PATH}) did not answer on 127.0.0.1:${port}: ${(error as Error).message}\n${tail.join('\n')}`,
        );
      }
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function logins(logFile: string, prefix: string): Promise<PgBouncerLogins> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  const names = [...text.matchAll(/login attempt: db=(\w+)/g)]
    .map((m) => m[1])
    .filter((name) => name.startsWith(prefix));
  return {
    logins: names.length,
    databases: new Set(names).size,
    poolerErrors: text.match(/ pooler error: /g)?.length ?? 0,
  };
}

/** One line for the test run's output: the suites' connections really reached it, and how many it refused. */
async function reportLogins(logFile: string): Promise<void> {
  const seen = await logins(logFile, 'plant_store_test_');
  console.log(
    `PgBouncer (transaction pooling): ${seen.logins} client logins to ${seen.databases} ` +
      `test databases, ${seen.poolerErrors} pooler errors`,
  );
}
