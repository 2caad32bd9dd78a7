import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Attempt } from './auth-failure.limiter.js';
import { RedisAuthFailureLimiter } from './redis-auth-failure.limiter.js';

const redisUrl = inject('redisUrl');

describe.skipIf(!redisUrl)('RedisAuthFailureLimiter (needs Redis)', () => {
  // A prefix of its own: no other test run shares these counters.
  const prefix = `plant-store-test-${randomBytes(6).toString('hex')}:`;
  const redis = new Redis(redisUrl ?? '', { keyPrefix: prefix, lazyConnect: true });
  afterAll(async () => {
    // KEYS takes the prefix too, and answers whole names.
    const keys = await redis.keys('*');
    if (keys.length > 0) await redis.del(...keys.map((key) => key.slice(prefix.length)));
    await redis.quit();
  });

  it('looks up at most the limit of concurrent checks of one client in one instance, and refuses the rest', async () => {
    const limiter = new RedisAuthFailureLimiter(redis, 5, 60_000);
    let checked = 0;
    const answers = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const admission = await limiter.admit('10.1.0.1');
        if (typeof admission === 'number') return admission;
        checked += 1;
        // A lookup takes a round trip or two: the other requests arrive meanwhile.
        await new Promise((resolve) => setImmediate(resolve));
        await admission.fail();
        return 'checked';
      }),
    );
    expect(checked).toBe(5);
    expect(answers.filter((answer) => typeof answer === 'number' && answer > 0)).toHaveLength(95);
    expect(Number(await redis.get('auth-failures:10.1.0.1'))).toBe(5);
  });

  it('shares the failures between instances: one after the other, the limit in all', async () => {
    const [a, b] = [1, 2].map(() => new RedisAuthFailureLimiter(redis, 3, 60_000));
    for (const limiter of [a, b, a]) {
      await ((await limiter.admit('10.1.0.2')) as Attempt).fail();
    }
    expect(await b.admit('10.1.0.2')).toBeGreaterThan(0);
    expect(await a.retryAfter('10.1.0.2')).toBeGreaterThan(0);
    expect(await b.retryAfter('10.1.0.3')).toBe(0);
  });

  it('lets right credentials sent together through one after the other, counting nothing', async () => {
    const limiter = new RedisAuthFailureLimiter(redis, 1, 60_000);
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const admission = await limiter.admit('10.1.0.4');
        if (typeof admission === 'number') return admission;
        await new Promise((resolve) => setImmediate(resolve));
        admission.release();
        return 'right';
      }),
    );
    expect(answers).toEqual(Array(20).fill('right'));
    expect(await limiter.retryAfter('10.1.0.4')).toBe(0);
    expect(await redis.get('auth-failures:10.1.0.4')).toBeNull();
  });
});
