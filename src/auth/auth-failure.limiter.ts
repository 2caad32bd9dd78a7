import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';

/** The failed-authentication budget, or null when rate limiting is off (then nothing is counted). */
export const AUTH_FAILURE_LIMITER = Symbol('AUTH_FAILURE_LIMITER');

/**
 * Counts failed authentications per client address; past the limit that
 * client gets 429s (before its token is even looked at) until the window
 * ends, so guessing tokens is slowed without affecting other clients.
 */
export interface AuthFailureLimiter {
  /**
   * Seconds until the client may try again; 0 when it may now. The in-memory
   * limiter answers without a promise: it is asked on every request.
   */
  retryAfter(client: string): number | Promise<number>;
  recordFailure(client: string): Promise<void>;
}

/** How many client addresses the in-memory limiter remembers at most. */
const MEMORY_LIMITER_MAX_CLIENTS = 100_000;

export interface MemoryLimiterOptions {
  /** The bound: past it, the least recently seen clients are forgotten. */
  maxClients?: number;
  /** Milliseconds on any monotonic scale (tests move it by hand). */
  now?: () => number;
}

/**
 * A count per client address, each living `windowMs` from when it was set
 * first, at most `maxClients` of them (the least recently seen forgotten
 * first): the in-memory failure budget's, and the refusal pacer's.
 */
export function clientWindows(
  maxClients: number,
  windowMs: number,
  now: () => number,
): LRUCache<string, number> {
  return new LRUCache({
    // maxSize, not max: storage that grows with use (see MemoryThrottlerStorage).
    maxSize: maxClients,
    sizeCalculation: () => 1,
    ttl: windowMs,
    // The clock is read on every call, not cached with a timer per millisecond.
    ttlResolution: 0,
    perf: { now },
  });
}

/**
 * In process memory, bounded: at most `maxClients` addresses, each forgotten
 * when its window ends, and every call O(1) however many addresses were seen.
 * At the bound the least recently seen addresses are forgotten, their failures
 * with them. That is a deliberate trade: a flood of distinct addresses can
 * neither exhaust memory nor slow each request down, at the price that a
 * guesser whose address is pushed out by more than `maxClients` newer ones
 * starts a fresh budget. Several instances, or a budget that must hold under
 * such a flood, use Redis (REDIS_URL).
 */
export class MemoryAuthFailureLimiter implements AuthFailureLimiter {
  /** Failures per client; each entry lives one window from its first failure. */
  private readonly failures: LRUCache<string, number>;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    {
      maxClients = MEMORY_LIMITER_MAX_CLIENTS,
      now = () => performance.now(),
    }: MemoryLimiterOptions = {},
  ) {
    this.failures = clientWindows(maxClients, windowMs, now);
  }

  /** How many clients are remembered (never more than maxClients). */
  get size(): number {
    return this.failures.size;
  }

  retryAfter(client: string): number {
    const count = this.failures.get(client);
    if (count === undefined || count < this.limit) return 0;
    return this.failures.getRemainingTTL(client) / 1000;
  }

  async recordFailure(client: string): Promise<void> {
    const count = this.failures.get(client);
    // noUpdateTTL: the window starts at the first failure and is not extended by later ones.
    if (count === undefined) this.failures.set(client, 1, { ttl: this.windowMs });
    else this.failures.set(client, count + 1, { noUpdateTTL: true });
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
