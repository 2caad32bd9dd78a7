import type { ThrottlerStorage } from '@nestjs/throttler';

/** ThrottlerStorageRecord, which @nestjs/throttler does not export from its index. */
export type StorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

interface Counter {
  hits: number;
  /** When the window that began with the first hit ends (ms since the epoch). */
  windowEnd: number;
  /** Until when the key is refused (ms since the epoch); 0 when it is not. */
  blockedUntil: number;
}

/** Past this many keys, expired ones are swept out on the next hit. */
const SWEEP_ABOVE = 100_000;

/**
 * @nestjs/throttler storage in process memory: a fixed-window counter per
 * key, with the semantics of the Redis storage beside it (the window starts
 * at the first hit and lasts `ttl`; past `limit` hits the key is blocked
 * for `blockDuration`).
 *
 * Not @nestjs/throttler's own ThrottlerStorageService: that one keeps one
 * expiry time per hit and filters the whole list on every request
 * (`pruneExpiredHits` in throttler.service.js), so each request costs
 * O(hits in the window): 270 → 911 µs per request within 60,000 requests of
 * one owner (BENCHMARKS.md). Here a hit is O(1).
 */
export class MemoryThrottlerStorage implements ThrottlerStorage {
  private readonly counters = new Map<string, Counter>();

  constructor(private readonly now: () => number = Date.now) {}

  /** How many keys are held: bounded by the keys seen within a window (tests read it). */
  get size(): number {
    return this.counters.size;
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<StorageRecord> {
    return this.hit(key, ttl, limit, blockDuration, throttlerName);
  }

  /** increment() without the promise: RateLimitGuard counts a request with no await. */
  hit(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): StorageRecord {
    const now = this.now();
    const id = `${throttlerName}:${key}`;
    let counter = this.counters.get(id);
    if (!counter) {
      if (this.counters.size >= SWEEP_ABOVE) this.sweep(now);
      counter = { hits: 0, windowEnd: now + ttl, blockedUntil: 0 };
      this.counters.set(id, counter);
    } else if (counter.windowEnd <= now) {
      counter.hits = 0;
      counter.windowEnd = now + ttl;
    }
    counter.hits += 1;
    if (counter.blockedUntil <= now && counter.hits > limit) {
      counter.blockedUntil = now + blockDuration;
    }
    const blockedFor = Math.max(0, counter.blockedUntil - now);
    return {
      totalHits: counter.hits,
      timeToExpire: Math.ceil((counter.windowEnd - now) / 1000),
      isBlocked: blockedFor > 0,
      timeToBlockExpire: Math.ceil(blockedFor / 1000),
    };
  }

  private sweep(now: number): void {
    for (const [id, counter] of this.counters) {
      if (counter.windowEnd <= now && counter.blockedUntil <= now) this.counters.delete(id);
    }
  }
}
