import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Redis } from 'ioredis';
import type { RedisVariables } from './redis.variables.js';

export const REDIS = Symbol('REDIS');

/**
 * The Redis client for counters shared by several instances (request quotas,
 * the failed-authentication budget), or null without REDIS_URL. Imported only
 * by the modules that are switched on, so that with them off no connection is
 * opened; Nest makes one instance of it however many modules import it.
 */
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [ConfigService],
      useFactory: (config: ConfigService<RedisVariables, true>): Redis | null => {
        const url = config.get('REDIS_URL', { infer: true });
        return url ? new Redis(url, { keyPrefix: 'plant-store:', maxRetriesPerRequest: 2 }) : null;
      },
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis?.quit();
  }
}
