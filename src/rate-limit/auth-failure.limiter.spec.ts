import { describe, expect, it } from 'vitest';
import { MemoryAuthFailureLimiter } from './auth-failure.limiter.js';

describe('MemoryAuthFailureLimiter', () => {
  it('refuses a client after the limit until the window ends, without affecting others', async () => {
    let now = 1_000_000;
    const limiter = new MemoryAuthFailureLimiter(3, 60_000, () => now);
    for (let i = 0; i < 2; i++) await limiter.recordFailure('10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
    await limiter.recordFailure('10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBe(60);
    expect(limiter.retryAfter('10.0.0.2')).toBe(0);
    now += 30_000;
    expect(limiter.retryAfter('10.0.0.1')).toBe(30);
    now += 30_000;
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
    await limiter.recordFailure('10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
  });
});
