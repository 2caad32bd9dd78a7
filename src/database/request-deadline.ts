import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What a request's database work carries without every repository passing it
 * along: the moment by which it must be done (waiting for a connection, every
 * statement, a retry, the token lookup included), and whose work it is, so
 * that the PostgreSQL pool can share its connections fairly between owners
 * (failover-pool.ts, fair-pool-gate.ts). Work outside a request (the webhook
 * dispatcher, start-up) has neither: each of its statements gets
 * DB_STATEMENT_TIMEOUT_MS, and it shares the pool as one more party.
 */
interface RequestScope {
  /** A Date.now() value; undefined for a streamed list's later pages. */
  expiresAt?: number;
  /** The caller's owner, once authenticated. */
  owner?: string;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/**
 * Whether requests keep a deadline on this database. PostgreSQL's work waits
 * for a pooled connection and on the network, which the deadline bounds
 * (failover-pool.ts). SQLite's runs in the process and waits only for the
 * write lock, which its busy timeout bounds: nothing there reads a deadline,
 * so none is kept, and no AsyncLocalStorage is entered. Entering one makes
 * Node 20 hook every promise of the process from then on, some 140 of them
 * per list request: about a quarter of a SQLite list's CPU time.
 */
export function keepsDeadlines(kind: 'sqlite' | 'postgres'): boolean {
  return kind === 'postgres';
}

/** Runs `work` with database work due by `expiresAt` (a Date.now() value), on behalf of `owner`. */
export function withDeadline<T>(expiresAt: number, work: () => T, owner?: string): T {
  return scopes.run({ expiresAt, owner }, work);
}

/** Milliseconds left for database work in this request, or undefined outside one. */
export function remainingMs(): number | undefined {
  const expiresAt = scopes.getStore()?.expiresAt;
  return expiresAt === undefined ? undefined : expiresAt - Date.now();
}

/** The owner whose request this database work serves, or undefined outside one. */
export function currentOwner(): string | undefined {
  return scopes.getStore()?.owner;
}

/**
 * Runs `work` without the request's deadline but on behalf of its owner: for
 * the pages of a streamed list, read while the answer is written at the pace
 * of its client, each statement with DB_STATEMENT_TIMEOUT_MS of its own.
 */
export function outsideDeadline<T>(work: () => T): T {
  // Without a scope to leave, the storage is not entered (see keepsDeadlines).
  const scope = scopes.getStore();
  return scope === undefined ? work() : scopes.run({ owner: scope.owner }, work);
}

/**
 * Runs `work` outside any request: for a background worker that a request
 * wakes, whose work (its statements, its timers) goes on after the request
 * has answered and is not the request's owner's.
 */
export function outsideRequest<T>(work: () => T): T {
  return scopes.getStore() === undefined ? work() : scopes.exit(work);
}
