import type { AttemptRecord } from './delivery-attempts.repository.js';
import { nextWait, retryAfterMs, withJitter } from './retry-schedule.js';
import type { AttemptResult } from './webhook-sender.js';
import type { WebhookSettings } from './webhook-settings.js';

export interface AttemptOutcome {
  kind: 'delivered' | 'retry' | 'failed' | 'disabled';
  record: AttemptRecord;
}

/**
 * What attempt number `attempts` of a delivery comes to, from the sender's
 * `result` at `now`: delivered on a 2xx; the subscription disabled on a 410;
 * otherwise a retry after the schedule's next wait (with jitter, or the
 * receiver's later Retry-After on a 429 or 503), or failed once the schedule
 * is spent.
 */
export function attemptOutcome(
  result: AttemptResult,
  attempts: number,
  settings: Pick<WebhookSettings, 'retrySchedule' | 'longestRetryWaitMs'>,
  now: number,
): AttemptOutcome {
  const lastStatus = result.status ?? null;
  if (result.status !== undefined && result.status >= 200 && result.status < 300) {
    return {
      kind: 'delivered',
      record: { state: 'delivered', lastStatus, lastError: null, nextAttemptAt: null },
    };
  }
  const lastError =
    result.status === undefined
      ? result.error
      : `receiver answered ${result.status}${result.excerpt ? `: ${result.excerpt}` : ''}`;
  if (result.status === 410) {
    return {
      kind: 'disabled',
      record: { state: 'failed', lastStatus, lastError, nextAttemptAt: null },
    };
  }
  const wait = settings.retrySchedule[attempts - 1];
  if (wait === undefined) {
    return {
      kind: 'failed',
      record: { state: 'failed', lastStatus, lastError, nextAttemptAt: null },
    };
  }
  // A 429/503 may ask for a longer back-off (Retry-After); the sender keeps it only for those.
  const asked = result.status === undefined ? undefined : retryAfterMs(result.retryAfter, now);
  const nextAttemptAt = now + nextWait(withJitter(wait), asked, settings.longestRetryWaitMs);
  return { kind: 'retry', record: { state: 'pending', lastStatus, lastError, nextAttemptAt } };
}
