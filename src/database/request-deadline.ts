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
  return deadlines.exit(work);
}
