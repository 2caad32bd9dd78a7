import type { Redis } from 'ioredis';

/**
 * Counts failed authentications per client IP; past the limit that client
 * gets 429s (before its token is even looked at) until the window ends, so
 * guessing tokens is slowed without affecting other clients.
 */
export interface AuthFailureLimiter {
  /**
   * Seconds until the client may try again; 0 when it may now. The in-memory
   * limiter answers without a promise: it is asked on every request.
   */
  retryAfter(client: string): number | Promise<number>;
  recordFailure(client: string): Promise<void>;
}

export class MemoryAuthFailureLimiter implements AuthFailureLimiter {
  private readonly failures = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  retryAfter(client: string): number {
    const entry = this.current(client);
    return entry && entry.count >= this.limit ? (entry.resetAt - this.now()) / 1000 : 0;
  }

  async recordFailure(client: string): Promise<void> {
    const entry = this.current(client) ?? { count: 0, resetAt: this.now() + this.windowMs };
    entry.count += 1;
    this.failures.set(client, entry);
    if (this.failures.size > 100_000) this.sweep();
  }

  private current(client: string) {
    const entry = this.failures.get(client);
    if (entry && entry.resetAt <= this.now()) {
      this.failures.delete(client);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    for (const client of this.failures.keys()) this.current(client);
  }
}

export class RedisAuthFailureLimiter implements AuthFailureLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  async retryAfter(client: string): Promise<number> {
    const key = this.key(client);
    const [[, count], [, ttl]] = (await this.redis.multi().get(key).pttl(key).exec()) as [
      [unknown, string | null],
      [unknown, number],
    ];
    return Number(count ?? 0) >= this.limit && ttl > 0 ? ttl / 1000 : 0;
  }

  async recordFailure(client: string): Promise<void> {
    const key = this.key(client);
    // NX: the window starts at the first failure and is not extended by later ones.
    await this.redis.multi().incr(key).pexpire(key, this.windowMs, 'NX').exec();
  }

  private key(client: string): string {
    return `auth-failures:${client}`;
  }
}
