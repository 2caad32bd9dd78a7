import pino, { type Logger } from 'pino';
import type { LogLevelName, NodeEnv } from '../config/process.variables.js';

/** Injects the root logger (see LoggingModule). */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * The one pino logger of the process: request lines and Nest's own log
 * lines go through it, as JSON lines on stdout (pretty in development).
 *
 * Lines are written asynchronously (sonic-boom, sync: false): under load the
 * lines that arrive while a write is in flight go out together in the next
 * one, instead of one blocking write(2) per request. pino flushes what is
 * left when the process exits, and LoggingModule on shutdown; a kill -9 may
 * lose the last few lines, never a stored plant.
 */
export function createRootLogger(level: LogLevelName, nodeEnv: NodeEnv): Logger {
  if (nodeEnv === 'development') {
    return pino({
      level,
      transport: { target: 'pino-pretty', options: { singleLine: true, destination: 1 } },
    });
  }
  return pino({ level }, pino.destination({ dest: 1, sync: false }));
}
