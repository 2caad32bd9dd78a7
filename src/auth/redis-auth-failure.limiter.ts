import type { Redis } from 'ioredis';
import { redisOrMemory } from '../redis/redis-or-memory.js';
import {
  type Attempt,
  type AuthFailureLimiter,
  MemoryAuthFailureLimiter,
} from './auth-failure.limiter.js';

/**
 * The failure budget shared through Redis by every instance: a client's
 * failures are counted in Redis, and any instance refuses it once they reach
 * the limit.
 *
 * Each instance also admits the checks of its own requests through an
 * in-memory limiter, which counts what Redis cannot yet: the credentials being
 * checked, and failures whose count a concurrent request read before it was
 * written. So one instance looks up at most `limit` wrong credentials of a
 * client per window however many arrive at once (several instances at once
 * up to `limit` each; one after the other, `limit` in all), and the right
 * credentials of that client wait for a place rather than being refused.
 * That local count starts its window at the instance's own first failure, so
 * an address that instance locked out may stay so on it a little longer than
 * Redis's window, never shorter. While Redis cannot answer, that local count
 * is the budget (redisOrMemory).
 */
export class RedisAuthFailureLimiter implements AuthFailureLimiter {
  private readonly local: MemoryAuthFailureLimiter;

  constructor(
    private readonly redis: Redis,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {
    this.local = new MemoryAuthFailureLimiter(limit, windowMs);
  }

  async retryAfter(client: string): Promise<number> {
    const shared = await this.sharedRetryAfter(client);
    return shared > 0 ? shared : this.local.retryAfter(client);
  }

  async admit(client: string): Promise<Attempt | number> {
    const shared = await this.sharedRetryAfter(client);
    if (shared > 0) return shared;
    const admission = await this.local.admit(client);
    if (typeof admission === 'number') return admission;
    return {
      release: () => admission.release(),
      fail: async () => {
        // Counted here first, at once: a request of this instance admitted meanwhile sees it.
        await admission.fail();
        await this.recordFailure(client);
      },
    };
  }

  private sharedRetryAfter(client: string): Promise<number> {
    const key = this.key(client);
    return redisOrMemory(
      async () => {
        const [[, count], [, ttl]] = (await this.redis.multi().get(key).pttl(key).exec()) as [
          [unknown, string | null],
          [unknown, number],
        ];
        return Number(count ?? 0) >= this.limit && ttl > 0 ? ttl / 1000 : 0;
      },
      () => 0,
    );
  }

  private async recordFailure(client: string): Promise<void> {
    const key = this.key(client);
    // NX: the window starts at the first failure and is not extended by later ones.
    await redisOrMemory(
      async () =>
        void (await this.redis.multi().incr(key).pexpire(key, this.windowMs, 'NX').exec()),
      () => undefined,
    );
  }

  private key(client: string): string {
    return `auth-failures:${client}`;
  }
}
