import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ThrottlerModule } from '@nestjs/throttler';
import type { Redis } from 'ioredis';
import type { AuthenticatedCaller } from '../auth/authenticated-owner.js';
import type { Environment } from '../config/environment.js';
import {
  type AuthFailureLimiter,
  MemoryAuthFailureLimiter,
  RedisAuthFailureLimiter,
} from './auth-failure.limiter.js';
import { MemoryThrottlerStorage } from './memory-throttler.storage.js';
import { RedisThrottlerStorage } from './redis-throttler.storage.js';
import { REDIS, RedisModule } from './redis.module.js';

export const AUTH_FAILURE_LIMITER = Symbol('AUTH_FAILURE_LIMITER');

type Config = ConfigService<Environment, true>;

/**
 * Rate limits: a budget of requests per window for each token owner (each
 * client IP when there is no owner), and a budget of failed authentications
 * per client IP. Counters live in Redis when REDIS_URL is set, so that
 * several instances share them; in memory otherwise.
 */
@Global()
@Module({
  imports: [
    RedisModule,
    ThrottlerModule.forRootAsync({
      imports: [RedisModule],
      inject: [ConfigService, REDIS],
      useFactory: (config: Config, redis: Redis | null) => ({
        throttlers: [
          {
            name: 'default',
            ttl: config.get('RATE_LIMIT_WINDOW_MS', { infer: true }),
            limit: config.get('RATE_LIMIT_MAX', { infer: true }),
          },
        ],
        // Not the built-in ThrottlerStorageService: its cost grows with the hits of a window.
        storage: redis ? new RedisThrottlerStorage(redis) : new MemoryThrottlerStorage(),
        // The bearer guard runs first, so an authenticated request has its owner here.
        getTracker: (request: Record<string, unknown>) => {
          const { user, ip } = request as { user?: AuthenticatedCaller; ip: string };
          return user ? `owner:${user.owner}` : `ip:${ip}`;
        },
        // One budget per owner across all routes (the default key is per route).
        generateKey: (_context, tracker, name) => `${name}:${tracker}`,
        errorMessage: 'too many requests: retry after the number of seconds in Retry-After',
      }),
    }),
  ],
  providers: [
    {
      provide: AUTH_FAILURE_LIMITER,
      inject: [ConfigService, REDIS],
      useFactory: (config: Config, redis: Redis | null): AuthFailureLimiter => {
        const limit = config.get('AUTH_FAILURE_LIMIT', { infer: true });
        const windowMs = config.get('RATE_LIMIT_WINDOW_MS', { infer: true });
        return redis
          ? new RedisAuthFailureLimiter(redis, limit, windowMs)
          : new MemoryAuthFailureLimiter(limit, windowMs);
      },
    },
  ],
  exports: [AUTH_FAILURE_LIMITER],
})
export class RateLimitModule {}
