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
    if (!callback) {
      return new Promise<pg.PoolClient>((resolve, reject) =>
        this.checkOut(scope, (error, client) => (error ? reject(error) : resolve(client!))),
      );
    }
    this.checkOut(scope, (error, client) => {
      if (error) callback(error, undefined, () => undefined);
      else callback(undefined, client, (failure?: Error) => client!.release(failure));
    });
    return undefined;
  }

  /**
   * A connection for `scope`, passed to `done`. Callbacks all the way from
   * TypeORM's to pg-pool's, as both libraries check out: a promise at each
   * step, with the gate's timer of each wait (fair-pool-gate.ts), cost about
   * 3 % of a list's instructions at 32 connections (BENCHMARKS.md,
   * "Instructions per request").
   */
  private checkOut(scope: RequestScope, done: Checkout): void {
    const gate = this.gate;
    if (!gate) return this.acquire(scope, undefined, done);
    // Most checkouts of a quiet pool find a place free.
    const leave = gate.tryEnter(scope.party);
    if (leave) return this.acquireHolding(leave, scope, done);
    const timeoutMs = this.options.connectionTimeoutMillis || 5000;
    gate.enter(scope.party, timeoutMs, scope.remainingMs(), (error, admitted) =>
      error ? done(error) : this.acquireHolding(admitted!, scope, done),
    );
  }

  /**
   * A connection for a checkout that holds a place of the gate, which `leave`
   * gives back once pg-pool has the connection again. A checkout given up at
   * the deadline while pg-pool was still making its connection keeps its
   * place until that connection has come (and been given back) or failed:
   * else the gate would admit more than the pool holds, and pg-pool's own
   * first-come queue would form behind it.
   */
  private acquireHolding(leave: Leave, scope: RequestScope, done: Checkout): void {
    const abandoned: Abandoned = { pending: false };
    this.acquire(scope, abandoned, (error, client) => {
      if (error) {
        if (abandoned.pending) abandoned.settled = leave;
        else leave();
        return done(error);
      }
      // pg-pool gives each checkout a release function of its own (an arrow
      // function, `_releaseOnce`, bound to nothing). The connection is idle
      // again before the place goes to a waiter, which then finds it there.
      // eslint-disable-next-line @typescript-eslint/unbound-method
      const release = client!.release;
      client!.release = (failure?: Error | boolean) => {
        release(failure);
        leave();
      };
      done(undefined, client);
    });
  }

  /** A connection whose statements get what `scope`'s deadline leaves. */
  private acquire(scope: RequestScope, abandoned: Abandoned | undefined, done: Checkout): void {
    let attempt = 0;
    // A stale client leaves the pool as it is found: at most `max` of them.
    let stale = 0;
    let failure: unknown;
    const next = (): void => {
      if (attempt >= this.attempts) {
        const reason = failure instanceof Error ? failure.message : String(failure);
        return done(
          new NoConnectionError(`no database connection could be made: ${reason}`, {
            cause: failure,
          }),
        );
      }
      this.checkout(scope, abandoned, (error, client) => {
        if (error) {
          if (!worthAnotherTry(error)) return done(error);
          failure = error;
          attempt += 1;
          return next();
        }
        const failoverClient = client as unknown as FailoverClient;
        if (failoverClient.epoch >= this.tracker.epoch) {
          failoverClient.scope = scope;
          return done(undefined, client);
        }
        client!.release(new Error('a connection from before a failover'));
        stale += 1;
        if (stale > (this.options.max ?? 10)) attempt += 1;
        next();
      });
    };
    next();
  }

  /** pg-pool's checkout, given up when the request's deadline passes (then said in `abandoned`). */
  private checkout(scope: RequestScope, abandoned: Abandoned | undefined, done: Checkout): void {
    const remaining = scope.remainingMs();
    if (remaining !== undefined && remaining <= 0) {
      process.nextTick(done, new DeadlineExceededError());
      return;
    }
    // pg-pool hands an idle client to its next waiter in the next tick: with
    // more idle than waiting, this checkout waits no longer than that, and
    // needs no timer of its own (pg-pool 3.14, `connect` and `_pulseQueue`).
    const idleForIt = this.idleCount > this.waitingCount;
    // A client made for this checkout checks its server within the deadline (FailoverClient).
    if (remaining === undefined || idleForIt) {
      handOver(scope, () => super.connect(done));
      return;
    }
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      // Given back whenever it comes: the request no longer waits for it.
      if (abandoned) abandoned.pending = true;
      done(new DeadlineExceededError());
    }, timerMs(remaining));
    handOver(scope, () =>
      super.connect((error?: Error, client?: pg.PoolClient) => {
        if (!late) {
          clearTimeout(timer);
          return done(error, client);
        }
        client?.release();
        if (abandoned) {
          abandoned.pending = false;
          abandoned.settled?.();
        }
      }),
    );
  }
}

/** What a checkout calls back with: an error, or the connection. */
type Checkout = (error: Error | undefined, client?: pg.PoolClient) => void;

/**
 * A checkout given up at its deadline: `pending` while pg-pool's checkout
 * has not come back; `settled` is called once it has.
 */
interface Abandoned {
  pending: boolean;
  settled?: () => void;
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
