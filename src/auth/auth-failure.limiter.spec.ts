import { describe, expect, it } from 'vitest';
import { measureFlatCost } from '../../test/support/flat-cost.js';
import { MemoryAuthFailureLimiter } from './auth-failure.limiter.js';

describe('MemoryAuthFailureLimiter', () => {
  it('refuses a client after the limit until the window ends, without affecting others', async () => {
    let now = 1_000_000;
    const limiter = new MemoryAuthFailureLimiter(3, 60_000, { now: () => now });
    for (let i = 0; i < 2; i++) await limiter.recordFailure('10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
    await limiter.recordFailure('10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBe(60);
    expect(limiter.retryAfter('10.0.0.2')).toBe(0);
    now += 30_000;
    // A failure within the window does not extend it.
    await limiter.recordFailure('10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBe(30);
    now += 30_000;
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
    await limiter.recordFailure('10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
  });

  it('forgets the least recently seen client at its bound, and only then', async () => {
    const limiter = new MemoryAuthFailureLimiter(1, 60_000, { maxClients: 2 });
    await limiter.recordFailure('10.0.0.1');
    await limiter.recordFailure('10.0.0.2');
    expect(limiter.retryAfter('10.0.0.1')).toBeGreaterThan(0); // 10.0.0.1 is now the most recent
    await limiter.recordFailure('10.0.0.3');
    expect(limiter.size).toBe(2);
    expect(limiter.retryAfter('10.0.0.1')).toBeGreaterThan(0);
    expect(limiter.retryAfter('10.0.0.2')).toBe(0);
    expect(limiter.retryAfter('10.0.0.3')).toBeGreaterThan(0);
  });

  it('costs the same per failure for 1,000,000 distinct clients, and holds at most its bound', () => {
    const limiter = new MemoryAuthFailureLimiter(20, 60_000, { maxClients: 100_000 });
    const { ratio, largestSize } = measureFlatCost(
      (client) => {
        limiter.retryAfter(client);
        void limiter.recordFailure(client);
      },
      () => limiter.size,
    );
    expect(largestSize).toBe(100_000);
    // Past the bound each new key also evicts one, which about doubles its cost; the sweep of
    // the whole map that this replaced visited all 100k keys for each new key past the 100k-th.
    expect(ratio).toBeLessThan(10);
  });
});
