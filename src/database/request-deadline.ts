import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The moment by which a request's database work must be done: waiting for a
 * connection, every statement, and a retry, the token lookup included. Held
 * in an AsyncLocalStorage so that the PostgreSQL client (failover-pool.ts)
 * can give each statement only the time that is left, without every
 * repository passing it along. Work outside a request (the webhook
 * dispatcher, start-up) has none, and each of its statements gets
 * DB_STATEMENT_TIMEOUT_MS.
 */
const deadlines = new AsyncLocalStorage<number>();

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

/** Runs `work` with database work due by `expiresAt` (a Date.now() value). */
export function withDeadline<T>(expiresAt: number, work: () => T): T {
  return deadlines.run(expiresAt, work);
}

/** Milliseconds left for database work in this request, or undefined outside one. */
export function remainingMs(): number | undefined {
  const expiresAt = deadlines.getStore();
  return expiresAt === undefined ? undefined : expiresAt - Date.now();
}

/**
 * Runs `work` outside any request's deadline: for the pages of a streamed
 * list, read while the answer is written at the pace of its client, each
 * statement with DB_STATEMENT_TIMEOUT_MS of its own.
 */
export function outsideDeadline<T>(work: () => T): T {
  // Without a deadline to leave, the storage is not entered (see keepsDeadlines).
  return deadlines.getStore() === undefined ? work() : deadlines.exit(work);
}
