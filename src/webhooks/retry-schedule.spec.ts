import { describe, expect, it } from 'vitest';
import { nextWait, parseRetrySchedule, retryAfterMs, withJitter } from './retry-schedule.js';

describe('retry schedule', () => {
  it('reads the default schedule and millisecond units', () => {
    expect(parseRetrySchedule('5s,30s,2m,10m,1h,6h,24h')).toEqual([
      5000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000,
    ]);
    expect(parseRetrySchedule(' 50ms, 1d ')).toEqual([50, 86_400_000]);
  });

  it('jitters by at most ±20 %', () => {
    expect(withJitter(1000, () => 0)).toBe(800);
    expect(withJitter(1000, () => 0.5)).toBe(1000);
    expect(withJitter(1000, () => 0.999999)).toBe(1200);
    for (let i = 0; i < 1000; i++) {
      const wait = withJitter(30_000);
      expect(wait).toBeGreaterThanOrEqual(24_000);
      expect(wait).toBeLessThanOrEqual(36_000);
    }
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-11-25T19:00:00Z');

  it('reads delta seconds and HTTP dates, and ignores anything else', () => {
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Wed, 25 Nov 2026 19:05:00 GMT', now)).toBe(300_000);
    expect(retryAfterMs('Wednesday, 25-Nov-26 19:01:00 GMT', now)).toBe(60_000);
    // A date gone by: no wait of its own.
    expect(retryAfterMs('Wed, 25 Nov 2026 18:00:00 GMT', now)).toBe(0);
    for (const garbage of [
      undefined,
      '',
      'soon',
      '-5',
      '1.5',
      '2026-11-25T19:05:00Z',
      '5s',
      'Wed, 99 Foo',
    ]) {
      expect(retryAfterMs(garbage, now)).toBeUndefined();
    }
  });

  it("waits the later of the schedule's wait and Retry-After, capped by the longest wait", () => {
    expect(nextWait(5000, undefined, 60_000)).toBe(5000);
    expect(nextWait(5000, 1000, 60_000)).toBe(5000);
    expect(nextWait(5000, 30_000, 60_000)).toBe(30_000);
    expect(nextWait(5000, 3_600_000, 60_000)).toBe(60_000);
    // A jittered wait above the longest one is kept: the cap only bounds Retry-After.
    expect(nextWait(70_000, 3_600_000, 60_000)).toBe(70_000);
  });
});
