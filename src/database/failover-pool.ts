import pg from 'pg';
import {
  DeadlineExceededError,
  deadlinePassed,
  NoConnectionError,
  permanentFailure,
} from './database-errors.js';
import { assertWritable, FailoverClient, PrimaryTracker } from './failover-client.js';
import { FairPoolGate, type Leave } from './fair-pool-gate.js';
import type { PostgresHost } from './postgres-url.js';
import { handedOverScope, handOver, type RequestScope, timerMs } from './request-scope.js';

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
    // Taken now, while TypeORM's query() is still calling (request-scope.ts).
    const scope = handedOverScope();
    const acquired = this.gate ? this.acquireFairly(this.gate, scope) : this.acquire(scope);
    if (!callback) return acquired;
    acquired.then(
      (client) => callback(undefined, client, (error?: Error) => client.release(error)),
      (error: unknown) => callback(error, undefined, () => undefined),
    );
    return undefined;
  }

  /** A connection once the owner's turn comes; its release gives the turn back. */
  private acquireFairly(gate: FairPoolGate, scope: RequestScope): Promise<pg.PoolClient> {
    // Most checkouts find a place free: no promise to await for it.
    const leave = gate.tryEnter(scope.party);
    if (leave) return this.acquireHolding(leave, scope);
    const timeoutMs = this.options.connectionTimeoutMillis || 5000;
    return gate
      .enter(scope.party, timeoutMs, scope.remainingMs())
      .then((admitted) => this.acquireHolding(admitted, scope));
  }

  /**
   * A connection for a checkout that holds a place of the gate, which `leave`
   * gives back. A checkout given up at the deadline while pg-pool was still
   * making its connection keeps its place until that connection has come (and
   * been given back) or failed: else the gate would admit more than the pool
   * holds, and pg-pool's own first-come queue would form behind it.
   */
  private async acquireHolding(leave: Leave, scope: RequestScope): Promise<pg.PoolClient> {
    const abandoned: Abandoned = {};
    let client: pg.PoolClient;
    try {
      client = await this.acquire(scope, abandoned);
    } catch (error) {
      if (abandoned.connect) void abandoned.connect.then(leave);
      else leave();
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

  /** A connection whose statements get what `scope`'s deadline leaves. */
  private async acquire(scope: RequestScope, abandoned?: Abandoned): Promise<pg.PoolClient> {
    let failure: unknown;
    // A stale client leaves the pool as it is found: at most `max` of them.
    let stale = 0;
    for (let attempt = 0; attempt < this.attempts;) {
      let client: pg.PoolClient;
      try {
        client = await this.checkout(scope, abandoned);
      } catch (error) {
        if (!worthAnotherTry(error)) throw error;
        failure = error;
        attempt += 1;
        continue;
      }
      const failoverClient = client as unknown as FailoverClient;
      if (failoverClient.epoch >= this.tracker.epoch) {
        failoverClient.scope = scope;
        return client;
      }
      client.release(new Error('a connection from before a failover'));
      stale += 1;
      if (stale > (this.options.max ?? 10)) attempt += 1;
    }
    const reason = failure instanceof Error ? failure.message : String(failure);
    throw new NoConnectionError(`no database connection could be made: ${reason}`, {
      cause: failure,
    });
  }

  /** pg-pool's checkout, given up when the request's deadline passes (then said in `abandoned`). */
  private checkout(scope: RequestScope, abandoned?: Abandoned): Promise<pg.PoolClient> {
    const remaining = scope.remainingMs();
    if (remaining !== undefined && remaining <= 0) {
      return Promise.reject(new DeadlineExceededError());
    }
    // pg-pool hands an idle client to its next waiter in the next tick: with
    // more idle than waiting, this checkout waits no longer than that, and
    // needs no timer of its own (pg-pool 3.14, `connect` and `_pulseQueue`).
    const idleForIt = this.idleCount > this.waitingCount;
    // A client made for this checkout checks its server within the deadline (FailoverClient).
    const pending = handOver(scope, () => super.connect());
    if (remaining === undefined || idleForIt) return pending;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new DeadlineExceededError());
        // Given back whenever it comes: the request no longer waits for it.
        const connect = pending.then(
          (client) => client.release(),
          () => undefined,
        );
        if (abandoned) abandoned.connect = connect;
      }, timerMs(remaining));
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

/** A checkout given up at its deadline: `connect` settles once pg-pool's checkout has. */
interface Abandoned {
  connect?: Promise<void>;
}

/**
 * A connection that failed to come up is tried again, unless the failure is
 * permanent (no such database, a login refused), the deadline passed, or the
 * pool was full for its whole connection timeout (another wait would only
 * make the request later).
 */
function worthAnotherTry(error: unknown): boolean {
  // Also a new connection's check (assertWritable), which runs within the deadline.
  if (deadlinePassed(error)) return false;
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
