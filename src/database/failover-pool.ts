import pg from 'pg';
import {
  DeadlineExceededError,
  NoConnectionError,
  permanentFailure,
  poisonsConnection,
  signalsFailover,
} from './database-errors.js';
import { FairPoolGate } from './fair-pool-gate.js';
import type { PostgresHost } from './postgres-url.js';
import { currentOwner, remainingMs } from './request-deadline.js';

/**
 * Where new connections go, and which connections date from before the last
 * failover. Shared by the pool and its clients (pg-pool hands its options to
 * each client it makes).
 */
class PrimaryTracker {
  /** Bumped by a failover: a connection made before it is not used again. */
  epoch = 0;
  private current = 0;

  constructor(private readonly hosts: readonly PostgresHost[]) {}

  /** The host believed to be the primary: the first of the URL until one fails. */
  target(): PostgresHost {
    return this.hosts[this.current];
  }

  /** `host` refused a connection or writes: new connections try the next host of the URL. */
  notPrimary(host: PostgresHost): void {
    if (this.hosts[this.current] === host) this.current = (this.current + 1) % this.hosts.length;
  }

  /** `host` stopped being the primary: every connection made so far is retired. */
  failedOver(host: PostgresHost): void {
    this.epoch += 1;
    this.notPrimary(host);
  }
}

interface FailoverClientConfig extends pg.ClientConfig {
  tracker: PrimaryTracker;
  query_timeout: number;
}

type Callback = (error: Error | undefined, ...rest: unknown[]) => void;

/**
 * node-postgres's Client, connected to the host the tracker names, that
 * gives each statement no more than the request's deadline leaves, and that
 * ends itself after an error that leaves it unfit (its socket failed, or its
 * server is no longer the primary): TypeORM releases a connection to the pool
 * after a query error, and pg-pool drops a client that is ending rather than
 * keep it (its _release checks `_ending`).
 */
class FailoverClient extends pg.Client {
  readonly epoch: number;
  readonly target: PostgresHost;
  readonly tracker: PrimaryTracker;
  private readonly statementTimeoutMs: number;

  constructor(config: FailoverClientConfig) {
    const target = config.tracker.target();
    super({ ...config, connectionString: target.url });
    this.tracker = config.tracker;
    this.epoch = config.tracker.epoch;
    this.target = target;
    this.statementTimeoutMs = config.query_timeout;
  }

  // pg-pool connects its clients with a callback; a host that cannot be
  // reached is not tried first again.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override connect(...args: any[]): any {
    const callback = args[0] as ((error: Error | null, client?: pg.Client) => void) | undefined;
    const observed = (error?: Error | null) => {
      if (error) this.tracker.notPrimary(this.target);
    };
    if (callback) {
      super.connect((error: Error | null) => {
        observed(error);
        callback(error, this);
      });
      return undefined;
    }
    return super.connect().catch((error: Error) => {
      observed(error);
      throw error;
    });
  }

  // Every form of node-postgres's query() (text, config object, callback or
  // promise) passes through; only a text query gets the deadline's timeout,
  // the one form TypeORM uses.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...input: any[]): any {
    let args: unknown[] = input;
    const remaining = remainingMs();
    const callbackAt = args.findIndex((arg) => typeof arg === 'function');
    if (remaining !== undefined && remaining <= 0) {
      const error = new DeadlineExceededError();
      if (callbackAt < 0) return Promise.reject(error);
      process.nextTick(args[callbackAt] as Callback, error);
      return undefined;
    }
    if (
      remaining !== undefined &&
      remaining < this.statementTimeoutMs &&
      typeof args[0] === 'string'
    ) {
      const values: unknown = Array.isArray(args[1]) ? args[1] : undefined;
      args = [{ text: args[0], values, query_timeout: remaining }, ...args.slice(values ? 2 : 1)];
    }
    if (callbackAt >= 0) {
      const at = args.findIndex((arg) => typeof arg === 'function');
      const callback = args[at] as Callback;
      args[at] = (error: Error | undefined, ...rest: unknown[]) => {
        if (error) this.unfitAfter(error);
        callback(error, ...rest);
      };
    }
    const result: unknown = super.query(...(args as [string]));
    if (!(result instanceof Promise)) return result;
    return result.catch((error: unknown) => {
      this.unfitAfter(error);
      throw error;
    });
  }

  private unfitAfter(error: unknown): void {
    if (!poisonsConnection(error)) return;
    if (signalsFailover(error)) this.tracker.failedOver(this.target);
    this.end().catch(() => undefined);
  }
}

/** A connection to a server that takes no writes (a standby, a primary being demoted) is no use here. */
async function assertWritable(client: FailoverClient): Promise<void> {
  const { rows } = (await client.query('SHOW transaction_read_only')) as pg.QueryResult<{
    transaction_read_only: string;
  }>;
  if (rows[0]?.transaction_read_only !== 'off') {
    client.tracker.notPrimary(client.target);
    throw new NoConnectionError(
      `${client.target.host}:${client.target.port} takes no writes (a standby, or a primary being demoted)`,
    );
  }
}

const POOL_TIMEOUT = 'timeout exceeded when trying to connect';

export interface FailoverPoolOptions extends pg.PoolConfig {
  /** The hosts of DATABASE_URL, in its order. */
  hosts: readonly PostgresHost[];
  /** DB_STATEMENT_TIMEOUT_MS: the longest a statement may take when the deadline leaves more. */
  query_timeout: number;
  /** FAIR_SHARE_ENABLED: connections shared between owners (fair-pool-gate.ts). */
  fairShare?: boolean;
}

/**
 * pg-pool's Pool, as TypeORM creates it (TypeORM's `driver` option names the
 * pg module to use; see data-source-options.ts), made to survive a failover:
 * - a new connection is checked for writes (pg-pool's onConnect hook) and
 *   dropped when its server is a standby;
 * - a connection made before a failover was seen is dropped when it comes
 *   out of the pool, not handed out;
 * - a connection that cannot be had is tried again, on the next host of a
 *   multi-host URL, a few times within the request's deadline;
 * - waiting for a connection ends with the deadline;
 * - while owners wait for connections, each freed one goes to the owner
 *   holding the fewest (FairPoolGate), so none starves the others.
 * What fails here fails before anything was sent: a NoConnectionError.
 */
export class FailoverPool extends pg.Pool {
  private readonly tracker: PrimaryTracker;
  private readonly attempts: number;
  private readonly gate: FairPoolGate | undefined;

  constructor({ hosts, fairShare, ...options }: FailoverPoolOptions) {
    const tracker = new PrimaryTracker(hosts);
    super({
      ...options,
      Client: FailoverClient as unknown as new () => pg.ClientBase,
      // pg-pool awaits the hook's promise (its types say void).
      onConnect: ((client: FailoverClient) => assertWritable(client)) as unknown as (
        client: pg.ClientBase,
      ) => void,
      tracker,
    } as pg.PoolConfig);
    this.tracker = tracker;
    // Each host once, and the first again: through a proxy, a second try may
    // reach the server the proxy has just switched to.
    this.attempts = Math.max(2, hosts.length + 1);
    this.gate = fairShare ? new FairPoolGate(options.max ?? 10) : undefined;
  }

  // TypeORM checks out with a callback; pg-pool's own query() too.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override connect(callback?: (...args: any[]) => void): any {
    const acquired = this.gate ? this.acquireFairly(this.gate) : this.acquire();
    if (!callback) return acquired;
    acquired.then(
      (client) => callback(undefined, client, (error?: Error) => client.release(error)),
      (error: unknown) => callback(error, undefined, () => undefined),
    );
    return undefined;
  }

  /** A connection once the owner's turn comes; its release gives the turn back. */
  private async acquireFairly(gate: FairPoolGate): Promise<pg.PoolClient> {
    const timeoutMs = this.options.connectionTimeoutMillis || 5000;
    const leave = await gate.enter(currentOwner() ?? '', timeoutMs, remainingMs());
    let client: pg.PoolClient;
    try {
      client = await this.acquire();
    } catch (error) {
      leave();
      throw error;
    }
    // pg-pool gives each checkout a release function of its own.
    const release = client.release.bind(client);
    client.release = (error?: Error | boolean) => {
      leave();
      release(error);
    };
    return client;
  }

  private async acquire(): Promise<pg.PoolClient> {
    let failure: unknown;
    // A stale client leaves the pool as it is found: at most `max` of them.
    let stale = 0;
    for (let attempt = 0; attempt < this.attempts;) {
      let client: pg.PoolClient;
      try {
        client = await this.checkout();
      } catch (error) {
        if (!worthAnotherTry(error)) throw error;
        failure = error;
        attempt += 1;
        continue;
      }
      if ((client as unknown as FailoverClient).epoch >= this.tracker.epoch) return client;
      client.release(new Error('a connection from before a failover'));
      stale += 1;
      if (stale > (this.options.max ?? 10)) attempt += 1;
    }
    const reason = failure instanceof Error ? failure.message : String(failure);
    throw new NoConnectionError(`no database connection could be made: ${reason}`, {
      cause: failure,
    });
  }

  /** pg-pool's checkout, given up when the request's deadline passes. */
  private checkout(): Promise<pg.PoolClient> {
    const remaining = remainingMs();
    if (remaining !== undefined && remaining <= 0) {
      return Promise.reject(new DeadlineExceededError());
    }
    const pending = super.connect();
    if (remaining === undefined) return pending;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new DeadlineExceededError());
        // Given back whenever it comes: the request no longer waits for it.
        pending.then(
          (client) => client.release(),
          () => undefined,
        );
      }, remaining);
      pending.then(
        (client) => {
          clearTimeout(timer);
          resolve(client);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }
}

/**
 * A connection that failed to come up is tried again, unless the failure is
 * permanent (no such database, a login refused), the deadline passed, or the
 * pool was full for its whole connection timeout (another wait would only
 * make the request later).
 */
function worthAnotherTry(error: unknown): boolean {
  if (error instanceof DeadlineExceededError) return false;
  if (permanentFailure(error) !== undefined) return false;
  return !(error instanceof Error && error.message.includes(POOL_TIMEOUT));
}

/** What TypeORM's `driver` option takes: the pg module, with this Pool in it. */
export const failoverPostgresDriver = {
  Pool: FailoverPool,
  Client: FailoverClient,
  defaults: pg.defaults,
  types: pg.types,
  DatabaseError: pg.DatabaseError,
};
