import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Redis } from 'ioredis';
import type { RateLimitVariables } from '../rate-limit/rate-limit.variables.js';
import type { AuthLimitVariables } from './auth-limits.variables.js';
import { REDIS, RedisModule } from '../redis/redis.module.js';
import {
  AUTH_FAILURE_LIMITER,
  type AuthFailureLimiter,
  MemoryAuthFailureLimiter,
} from './auth-failure.limiter.js';
import { RedisAuthFailureLimiter } from './redis-auth-failure.limiter.js';

/**
 * The failed-authentication budget per client address. Shared through Redis
 * when REDIS_URL is set (several instances count together), in memory
 * otherwise. Imported only when rate limiting is on; without it the bearer
 * guard counts nothing and no Redis connection is opened.
 */
@Module({
  imports: [RedisModule],
  providers: [
    {
      provide: AUTH_FAILURE_LIMITER,
      inject: [ConfigService, REDIS],
      useFactory: (
        config: ConfigService<AuthLimitVariables & RateLimitVariables, true>,
        redis: Redis | null,
      ): AuthFailureLimiter => {
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
export class AuthFailureModule {}
