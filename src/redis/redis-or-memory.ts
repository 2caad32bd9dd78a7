/**
 * The answer of `shared`, a Redis command, or, when Redis cannot give one
 * (unreachable, restarting, past its command timeout), of `local`, the same
 * count kept in this instance's memory. Fail open: limits are protection, and
 * while Redis is away each instance still enforces them on its own (so a
 * fleet of n lets through at most n times a shared limit), rather than every
 * request failing with it. The outage itself is logged by redis.module.ts.
 */
export async function redisOrMemory<T>(
  shared: () => Promise<T>,
  local: () => T | Promise<T>,
): Promise<T> {
  try {
    return await shared();
  } catch {
    return local();
  }
}
