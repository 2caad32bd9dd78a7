import pg from 'pg';
import {
  DeadlineExceededError,
  DeadlineInStatementError,
  NoConnectionError,
  poisonsConnection,
  READ_TIMEOUT_MESSAGE,
  signalsFailover,
} from './database-errors.js';
import { ObjectRowsQuery } from './object-rows-query.js';
import type { PostgresHost } from './postgres-url.js';
import { handedOverScope, type RequestScope, timerMs } from './request-scope.js';

/**
 * Where new connections go, and which connections date from before the last
 * failover. Shared by the pool and its clients (pg-pool hands its options to
 * each client it makes).
 */
export class PrimaryTracker {
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
export class FailoverClient extends pg.Client {
  readonly epoch: number;
  readonly target: PostgresHost;
  readonly tracker: PrimaryTracker;
  /**
   * Whose work the connection does, and by when: set by the pool at each
   * checkout (failover-pool.ts); at first, the checkout's that made it, so
   * that its check for writes (assertWritable) keeps that deadline.
   */
  scope: RequestScope = handedOverScope();
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
  // promise) passes through; a text query gets the deadline's timeout, and one with
  // parameters builds its rows once per shape of row (ObjectRowsQuery).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...input: any[]): any {
    const args: unknown[] = input;
    const remaining = this.scope.remainingMs();
    const callbackAt = args.findIndex((arg) => typeof arg === 'function');
    const callback = callbackAt < 0 ? undefined : (args[callbackAt] as Callback);
    if (remaining !== undefined && remaining <= 0) {
      const error = new DeadlineExceededError();
      if (!callback) return Promise.reject(error);
      process.nextTick(callback, error);
      return undefined;
    }
    const text = args[0];
    const values = Array.isArray(args[1]) ? (args[1] as unknown[]) : undefined;
    const timed = remaining !== undefined && remaining < this.statementTimeoutMs;
    if (typeof text === 'string' && (timed || (values !== undefined && values.length > 0))) {
      const submitted = this.submitted(
        text,
        values,
        timed ? Math.min(timerMs(remaining), this.statementTimeoutMs) : undefined,
      );
      if (!callback) return submitted;
      submitted.then((result) => callback(undefined, result), callback);
      return undefined;
    }
    if (callback) {
      args[callbackAt] = (error: Error | undefined, ...rest: unknown[]) => {
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

  /**
   * A text query, submitted as a query object: with parameters an
   * ObjectRowsQuery (its rows built once per shape of row, see there), and
   * with `timeoutMs`, what the deadline leaves, as its read timeout. Not a
   * config object, which would carry both but which node-postgres copies
   * through its property descriptors, 2 % of a list request's CPU time
   * (BENCHMARKS.md, "Where a list's time goes"). The "a statement that gets
   * no answer" test in test/errors.e2e-spec.ts pins that the timeout is read.
   */
  private submitted(
    text: string,
    values: unknown[] | undefined,
    timeoutMs: number | undefined,
  ): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      const done = (error: Error | undefined, result?: pg.QueryResult) => {
        if (!error) return resolve(result!);
        // A timed query's read timeout is the deadline's.
        const failure =
          timeoutMs !== undefined && error.message === READ_TIMEOUT_MESSAGE
            ? new DeadlineInStatementError({ cause: error })
            : error;
        this.unfitAfter(failure);
        reject(failure);
      };
      const query =
        values !== undefined && values.length > 0
          ? new ObjectRowsQuery(text, values, this, done)
          : new pg.Query(text, values, done as (error: Error | undefined) => void);
      // Client.query reads the timeout from the query it is given.
      if (timeoutMs !== undefined) {
        (query as pg.Query & { query_timeout: number }).query_timeout = timeoutMs;
      }
      super.query(query);
    });
  }

  private unfitAfter(error: unknown): void {
    if (!poisonsConnection(error)) return;
    if (signalsFailover(error)) this.tracker.failedOver(this.target);
    this.end().catch(() => undefined);
  }
}

/** A connection to a server that takes no writes (a standby, a primary being demoted) is no use here. */
export async function assertWritable(client: FailoverClient): Promise<void> {
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
