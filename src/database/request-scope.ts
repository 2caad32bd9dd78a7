/**
 * What a request's database work carries: the moment by which it must be
 * done (waiting for a connection, every statement, a retry, the token lookup
 * included), and on whose behalf it runs (its party), so that the PostgreSQL
 * pool can share its connections fairly (failover-pool.ts,
 * fair-pool-gate.ts). Work outside a request (the webhook dispatcher,
 * start-up) runs in `RequestScope.background`: no deadline (each of its
 * statements gets DB_STATEMENT_TIMEOUT_MS), and the party `background`; so
 * does the readiness probe's ping, which has a timeout of its own
 * (HEALTH_DB_TIMEOUT_MS).
 *
 * A request's scope is passed along as an argument, from the controller
 * (`@CallerScope()`) through the service and the repository to the statement
 * (CompiledQuery, Transactions), and from there to the pool by `handOver`.
 * It is not kept in an AsyncLocalStorage: on Node 20 entering one hooks every
 * promise of the process from then on, which cost a tenth to a quarter of a
 * PostgreSQL request's CPU time (DECISIONS.md, "A request's scope is an
 * argument").
 */
export class RequestScope {
  /** Work outside any request. */
  static readonly background = new RequestScope(undefined, 'background');

  private constructor(
    /** A Date.now() value; undefined for work without a deadline. */
    readonly expiresAt: number | undefined,
    /** `owner:<owner>`, `address:<client address>` while its token is looked up, or `background`. */
    readonly party: string,
  ) {}

  /**
   * The scope of a request that arrived `elapsedMs` ago from `address`: due
   * `budgetMs` (DB_REQUEST_DEADLINE_MS) after its arrival; its client
   * address's work until its owner is known (`forOwner`).
   */
  static arrival(budgetMs: number, elapsedMs: number, address: string): RequestScope {
    return new RequestScope(Date.now() - elapsedMs + budgetMs, `address:${address}`);
  }

  /** Work due by `expiresAt` (a Date.now() value), on behalf of `party`. */
  static until(expiresAt: number, party = 'background'): RequestScope {
    return new RequestScope(expiresAt, party);
  }

  /** The same request once its token named `owner`: the same deadline, the owner's work. */
  forOwner(owner: string): RequestScope {
    return new RequestScope(this.expiresAt, ownerParty(owner));
  }

  /**
   * The same party's work done later without the request's deadline: the
   * pages of a streamed list, read while the answer is written at its
   * client's pace (each statement with DB_STATEMENT_TIMEOUT_MS of its own).
   */
  later(): RequestScope {
    return new RequestScope(undefined, this.party);
  }

  /** Milliseconds left for this work, or undefined when it has no deadline. */
  remainingMs(): number | undefined {
    return this.expiresAt === undefined ? undefined : this.expiresAt - Date.now();
  }
}

/**
 * The duration of a timer that ends work with `ms` left: rounded up to a
 * step of at most a thirty-second of it (a power of two), so at most 3 %
 * late. Node keeps a list of timers for each duration, made for the first
 * timer of that duration and dropped with its last (a store into and a
 * delete from a dictionary, an insert into and a removal from a priority
 * queue): timers of what each request's deadline leaves, a few milliseconds
 * apart, made a list each, 1 to 2 % of a PostgreSQL create's instructions.
 * Rounded, the timers of requests in flight share a few lists
 * (BENCHMARKS.md, "Instructions per request").
 */
export function timerMs(ms: number): number {
  const step = ms < 64 ? 1 : 2 ** (31 - Math.clz32(ms / 32));
  return Math.ceil(ms / step) * step;
}

/** The party of an authenticated owner's work. */
export const ownerParty = (owner: string): string => `owner:${owner}`;

/** Of scopes of one party, the one due first (work without a deadline is due last). */
export function earliestScope(scopes: readonly RequestScope[]): RequestScope {
  return scopes.reduce((earliest, scope) =>
    (scope.expiresAt ?? Infinity) < (earliest.expiresAt ?? Infinity) ? scope : earliest,
  );
}

let handedOver: RequestScope | undefined;

/**
 * Calls `start`, which checks a connection out of the pool before it
 * returns, and lets the pool's `connect` take `scope` (`handedOverScope`).
 * TypeORM's `QueryRunner.query()` and `connect()` reach the pool's `connect`
 * synchronously (PostgresQueryRunner.connect, PostgresDriver.
 * obtainMasterConnection; pinned by the party and deadline tests of
 * test/errors.e2e-spec.ts): that is how the scope passes TypeORM, whose API
 * has no place for it. What `start` does after its first await runs without
 * it.
 */
export function handOver<T>(scope: RequestScope, start: () => T): T {
  const previous = handedOver;
  handedOver = scope;
  try {
    return start();
  } finally {
    handedOver = previous;
  }
}

/** The scope `handOver` is calling with, or `background` outside one. */
export function handedOverScope(): RequestScope {
  return handedOver ?? RequestScope.background;
}
