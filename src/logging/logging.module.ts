import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import type { Environment } from '../config/environment.js';
import { PinoNestLogger } from './pino-nest.logger.js';
import { RequestLog } from './request-log.js';
import { createRootLogger, ROOT_LOGGER } from './root-logger.js';

/**
 * Structured logs with pino: one JSON line per request (see request-log.ts)
 * and every Nest log line in the same format (see pino-nest.logger.ts),
 * through one root logger. Headers are never logged, so neither is
 * Authorization.
 */
@Global()
@Module({
  providers: [
    {
      provide: ROOT_LOGGER,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) =>
        createRootLogger(
          config.get('LOG_LEVEL', { infer: true }),
          config.get('NODE_ENV', { infer: true }),
        ),
    },
    PinoNestLogger,
    RequestLog,
  ],
  exports: [ROOT_LOGGER, PinoNestLogger, RequestLog],
})
export class LoggingModule implements OnApplicationShutdown {
  constructor(@Inject(ROOT_LOGGER) private readonly logger: Logger) {}

  onApplicationShutdown(): void {
    this.logger.flush();
  }
}
