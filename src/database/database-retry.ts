import { deadlinePassed, isDatabaseUnavailable, nothingRan } from './database-errors.js';
import type { RequestScope } from './request-scope.js';

/**
 * When a failed piece of database work may be run again:
 * - `repeatable`: whatever happened, running it again answers as the first
 *   run would have (a read; a create, whose exact replay answers as the
 *   first did and writes nothing);
 * - `if-nothing-ran`: only when the failure proves nothing was done (no
 *   connection, or the server refused the statement); a delete whose
 *   connection was lost mid-statement may have happened, so it is not.
 */
export type RetryPolicy = 'repeatable' | 'if-nothing-ran';

function worthRetrying(policy: RetryPolicy, error: unknown, scope: RequestScope): boolean {
  if (deadlinePassed(error) || !isDatabaseUnavailable(error)) return false;
  // SQLite's busy and locked errors come after its own wait (DB_STATEMENT_TIMEOUT_MS).
  const { code } = (error as { driverError?: { code?: unknown } }).driverError ?? {};
  if (typeof code === 'string' && code.startsWith('SQLITE_')) return false;
  const remaining = scope.remainingMs();
  if (remaining !== undefined && remaining <= 0) return false;
  return policy === 'repeatable' || nothingRan(error);
}

/**
 * Runs `work`, and once more when it failed on an unavailable database and
 * the policy allows it: by then the connection that failed has been dropped
 * (failover-pool.ts), so the second run gets another one, within what is left
 * of the request's deadline (`scope`'s).
 */
export async function retryOnce<T>(
  policy: RetryPolicy,
  work: () => Promise<T>,
  scope: RequestScope,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!worthRetrying(policy, error, scope)) throw error;
    return work();
  }
}
