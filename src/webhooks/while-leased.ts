import { setTimeout as sleep } from 'node:timers/promises';

/** The wait before the second try; doubled after each failure, up to MAX_WAIT_MS. */
const FIRST_WAIT_MS = 100;
const MAX_WAIT_MS = 2000;

/**
 * Runs `write` (what an attempt leaves in the database: its record, a
 * subscription disabled) until it succeeds, trying again after a failure (the
 * database busy, or failing over) with a growing wait, while the delivery's
 * lease lasts (`leaseUntil`, a Date.now() value) and `stop` (the end of
 * shutdown's grace) has not come. Given up, the lease runs out and the
 * delivery is claimed and sent again: a receiver then gets the event twice.
 */
export async function whileLeased<T>(
  write: () => Promise<T>,
  leaseUntil: number,
  stop: AbortSignal,
): Promise<T> {
  for (let wait = FIRST_WAIT_MS; ; wait = Math.min(2 * wait, MAX_WAIT_MS)) {
    try {
      return await write();
    } catch (error) {
      if (stop.aborted || Date.now() + wait >= leaseUntil) throw error;
      await sleep(wait);
    }
  }
}
