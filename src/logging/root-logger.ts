import pino, { type Logger } from 'pino';
import type { LogLevelName, NodeEnv } from '../config/environment.js';

/** Injects the root logger (see LoggingModule). */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * The one pino logger of the process: request lines and Nest's own log
 * lines go through it, as JSON lines on stdout (pretty in development).
 */
export function createRootLogger(level: LogLevelName, nodeEnv: NodeEnv): Logger {
  return pino({
    level,
    transport:
      nodeEnv === 'development'
        ? { target: 'pino-pretty', options: { singleLine: true, destination: 1 } }
        : undefined,
  });
}
