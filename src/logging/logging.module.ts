import {
  type DynamicModule,
  Global,
  Inject,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Logger } from 'pino';
import { PinoNestLogger } from './pino-nest.logger.js';
import { RequestLog } from './request-log.js';
import { ROOT_LOGGER } from './root-logger.js';

/**
 * Structured logs with pino: one JSON line per request (see request-log.ts)
 * and every Nest log line in the same format (see pino-nest.logger.ts),
 * through one root logger. Headers are never logged, so neither is
 * Authorization. The root logger is made before Nest starts (app.setup.ts),
 * so that Nest's first lines, and those of a start that fails, are JSON too.
 */
@Global()
@Module({})
export class LoggingModule implements OnApplicationShutdown {
  static forRoot(rootLogger: Logger): DynamicModule {
    return {
      module: LoggingModule,
      providers: [{ provide: ROOT_LOGGER, useValue: rootLogger }, PinoNestLogger, RequestLog],
      exports: [ROOT_LOGGER, PinoNestLogger, RequestLog],
    };
  }

  constructor(@Inject(ROOT_LOGGER) private readonly logger: Logger) {}

  onApplicationShutdown(): void {
    this.logger.flush();
  }
}
