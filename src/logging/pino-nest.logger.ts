import { Inject, Injectable, type LoggerService } from '@nestjs/common';
import type { Level, Logger } from 'pino';
import { ROOT_LOGGER } from './root-logger.js';

/** Nest's `error(message, stack, context)` hands a stack as a string. */
const looksLikeStack = (value: unknown): value is string =>
  typeof value === 'string' && /\n\s*at /.test(value);

/**
 * Nest's LoggerService on the root pino logger: `new Logger('Context')` lines
 * from anywhere in the app become JSON lines with `context`, and an error's
 * stack goes into `err.stack`, as pino's error serializer writes it.
 */
@Injectable()
export class PinoNestLogger implements LoggerService {
  constructor(@Inject(ROOT_LOGGER) private readonly logger: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    // Nest passes the context last; anything between message and context is extra.
    const fields: Record<string, unknown> = {};
    const extra = [...params];
    if (extra.length > 0) fields.context = extra.pop();
    if (message instanceof Error) {
      fields.err = message;
      this.logger[level](fields, message.message);
      return;
    }
    if (typeof message === 'object' && message !== null) {
      this.logger[level]({ ...fields, ...message });
      return;
    }
    if (looksLikeStack(extra[0])) {
      const err = new Error(String(message));
      err.stack = extra[0];
      fields.err = err;
    }
    this.logger[level](fields, String(message));
  }
}
