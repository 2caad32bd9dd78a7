import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Redis } from 'ioredis';
import type { Environment } from '../config/environment.js';

export const REDIS = Symbol('REDIS');

/** The Redis client for shared rate-limit counters, or null without REDIS_URL. */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>): Redis | null => {
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
