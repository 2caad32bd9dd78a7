import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Redis } from 'ioredis';
import { redisOrMemory } from '../redis/redis-or-memory.js';
import { MemoryThrottlerStorage } from './memory-throttler.storage.js';
import { type StorageRecord, storageRecord } from './storage-record.js';

// One round trip, atomic across instances: count the hit in the window, and
// block the key for blockDuration once the count passes the limit.
const INCREMENT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
local blocked = redis.call('PTTL', KEYS[2])
if blocked <= 0 and hits > tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
  blocked = tonumber(ARGV[3])
end
return {hits, ttl, blocked}
`;

/**
 * @nestjs/throttler storage in Redis, so that several instances share one
 * budget; while Redis cannot answer, in this instance's memory (redisOrMemory).
 */
export class RedisThrottlerStorage implements ThrottlerStorage {
  private readonly local = new MemoryThrottlerStorage();

  constructor(private readonly redis: Redis) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<StorageRecord> {
    const base = `throttle:${throttlerName}:${key}`;
    return redisOrMemory(
      async () => {
        const [hits, ttlMs, blockedMs] = (await this.redis.eval(
          INCREMENT,
          2,
          `${base}:hits`,
          `${base}:blocked`,
          ttl,
          limit,
          blockDuration,
        )) as [number, number, number];
        return storageRecord(hits, ttlMs, blockedMs);
      },
      () => this.local.increment(key, ttl, limit, blockDuration, throttlerName),
    );
  }
}
