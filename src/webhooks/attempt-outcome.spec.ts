import { describe, expect, it } from 'vitest';
import { attemptOutcome } from './attempt-outcome.js';

const NOW = 1_000_000;
const settings = { retrySchedule: [5000, 30_000], longestRetryWaitMs: 86_400_000 };

describe('attemptOutcome', () => {
  it('is delivered on a 2xx', () => {
    expect(attemptOutcome({ status: 204, excerpt: '' }, 1, settings, NOW)).toEqual({
      kind: 'delivered',
      record: { state: 'delivered', lastStatus: 204, lastError: null, nextAttemptAt: null },
    });
  });

  it('disables the subscription on a 410, whatever the schedule has left', () => {
    expect(attemptOutcome({ status: 410, excerpt: 'gone' }, 1, settings, NOW)).toEqual({
      kind: 'disabled',
      record: {
        state: 'failed',
        lastStatus: 410,
        lastError: 'receiver answered 410: gone',
        nextAttemptAt: null,
      },
    });
  });

  it("retries after the schedule's wait, within ±20 %, and fails once the schedule is spent", () => {
    const retry = attemptOutcome({ error: 'request failed: ECONNREFUSED' }, 2, settings, NOW);
    expect(retry.kind).toBe('retry');
    expect(retry.record).toMatchObject({ state: 'pending', lastStatus: null });
    expect(retry.record.nextAttemptAt! - NOW).toBeGreaterThanOrEqual(24_000);
    expect(retry.record.nextAttemptAt! - NOW).toBeLessThanOrEqual(36_000);
    expect(attemptOutcome({ status: 500, excerpt: '' }, 3, settings, NOW)).toEqual({
      kind: 'failed',
      record: {
        state: 'failed',
        lastStatus: 500,
        lastError: 'receiver answered 500',
        nextAttemptAt: null,
      },
    });
  });

  it("waits as long as a 429's Retry-After asks when that is later than the schedule", () => {
    const held = attemptOutcome({ status: 429, excerpt: '', retryAfter: '120' }, 1, settings, NOW);
    expect(held.record.nextAttemptAt).toBe(NOW + 120_000);
  });
});
