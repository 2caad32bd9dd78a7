import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Redis } from 'ioredis';
import type { RedisVariables } from './redis.variables.js';

export const REDIS = Symbol('REDIS');

/** How long a command may take before its caller counts locally instead. */
const REDIS_COMMAND_TIMEOUT_MS = 1000;

/** One warning when Redis becomes unreachable, one line when it is back: not one per retry. */
function logOutages(redis: Redis, logger: Logger): void {
  let reachable = true;
  redis.on('error', (error: Error) => {
    if (!reachable) return;
    reachable = false;
    logger.warn(
      `Redis is unreachable (${error.message}): request quotas and the failure budget are ` +
        'counted by this instance alone until it is back',
    );
  });
  redis.on('ready', () => {
    if (reachable) return;
    reachable = true;
    logger.log('Redis is reachable again: counters are shared again');
  });
}

/**
 * The Redis client for counters shared by several instances (request quotas,
 * the failed-authentication budget), or null without REDIS_URL. Imported only
 * by the modules that are switched on, so that with them off no connection is
 * opened; Nest makes one instance of it however many modules import it.
 *
 * Redis may go away (a restart, a failover): its users then count in this
 * instance's memory alone (fail open, see redisOrMemory), so a command fails
 * at once rather than queue while the client reconnects, or after
 * REDIS_COMMAND_TIMEOUT_MS when Redis is connected but does not answer. The
 * outage is logged once when it begins and once when it ends.
 */
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [ConfigService],
      useFactory: async (config: ConfigService<RedisVariables, true>): Promise<Redis | null> => {
        const url = config.get('REDIS_URL', { infer: true });
        if (!url) return null;
        const redis = new Redis(url, {
          keyPrefix: 'plant-store:',
          enableOfflineQueue: false,
          commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
        });
        logOutages(redis, new Logger('Redis'));
        // Connected before the first request, which would otherwise count locally; an
        // unreachable Redis does not stop start-up (its first failure is logged), nor
        // holds it past REDIS_COMMAND_TIMEOUT_MS when its host does not answer at all.
        await Promise.race([
          new Promise((resolve) => redis.once('ready', resolve).once('error', resolve)),
          sleep(REDIS_COMMAND_TIMEOUT_MS),
        ]);
        return redis;
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
