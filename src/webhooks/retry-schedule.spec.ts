import { describe, expect, it } from 'vitest';
import { parseRetrySchedule, withJitter } from './retry-schedule.js';

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
