import type { ThrottlerStorage } from '@nestjs/throttler';
import { LRUCache } from 'lru-cache';
import { type StorageRecord, storageRecord } from './storage-record.js';

interface Counter {
  hits: number;
  /** When the window that began with the first hit ends (ms on the storage's clock). */
  windowEnd: number;
  /** Until when the key is refused (ms on the storage's clock); 0 when it is not. */
  blockedUntil: number;
}

/** How many keys (owners and client addresses) the in-memory storage holds at most. */
const MEMORY_THROTTLER_MAX_KEYS = 100_000;

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
 * one owner (BENCHMARKS.md's git history). Here a hit is O(1).
 *
 * Bounded: at most `maxKeys` keys; past that, the least recently counted key
 * is forgotten, so a flood of distinct client addresses costs neither memory
 * nor time per request. The trade is deliberate: a key pushed out by more
 * than `maxKeys` newer ones starts a fresh window. Shared counters that must
 * hold under such a flood live in Redis (REDIS_URL).
 */
export class MemoryThrottlerStorage implements ThrottlerStorage {
  private readonly counters: LRUCache<string, Counter>;

  constructor(
    private readonly now: () => number = () => performance.now(),
    maxKeys = MEMORY_THROTTLER_MAX_KEYS,
  ) {
    // Bounded by maxSize at one unit a key, not by max: given max, lru-cache
    // allocates its arrays for every key up front (about 4 MiB for 100,000
    // keys), held by every idle instance; given maxSize they grow with use.
    this.counters = new LRUCache({ maxSize: maxKeys, sizeCalculation: () => 1 });
  }

  /** How many keys are held: never more than maxKeys (tests read it). */
  get size(): number {
    return this.counters.size;
  }

  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<StorageRecord> {
    return Promise.resolve(this.hit(key, ttl, limit, blockDuration, throttlerName));
  }

  /** increment's count, answered at once: RateLimitGuard takes it without awaiting a promise. */
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
    return storageRecord(counter.hits, counter.windowEnd - now, counter.blockedUntil - now);
  }
}
