import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ThrottlerModule } from '@nestjs/throttler';
import type { Redis } from 'ioredis';
import type { RateLimitVariables } from './rate-limit.variables.js';
import { REDIS, RedisModule } from '../redis/redis.module.js';
import { MemoryThrottlerStorage } from './memory-throttler.storage.js';
import { RedisThrottlerStorage } from './redis-throttler.storage.js';
import { throttlerOptions } from './throttler-options.js';

type Config = ConfigService<RateLimitVariables, true>;

/**
 * Request quotas: a budget of requests per window for each token owner (each
 * client address when there is no owner), enforced by @nestjs/throttler's
 * ThrottlerGuard (as RateLimitGuard, registered in AppModule, after
 * authentication). Counters live in Redis when REDIS_URL is set, so that
 * several instances share them; in memory otherwise. Imported only when
 * RATE_LIMIT_ENABLED is on.
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      imports: [RedisModule],
      inject: [ConfigService, REDIS],
      useFactory: (config: Config, redis: Redis | null) =>
        throttlerOptions({
          windowMs: config.get('RATE_LIMIT_WINDOW_MS', { infer: true }),
          maxRequests: config.get('RATE_LIMIT_MAX', { infer: true }),
          // Not the built-in ThrottlerStorageService: its cost grows with the hits of a window.
          storage: redis ? new RedisThrottlerStorage(redis) : new MemoryThrottlerStorage(),
        }),
    }),
  ],
  exports: [ThrottlerModule],
})
export class RateLimitModule {}
