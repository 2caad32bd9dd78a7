import pino from 'pino';
import { InvalidEnvironmentError } from '../config/load-environment.js';

/**
 * The last lines of a start that failed (bad configuration, the database
 * unreachable): JSON lines like every other, for the log pipeline that needs
 * them most then, unless a person reads them on a terminal. A bad
 * configuration is one line per bad variable. Written synchronously: the
 * process exits right after.
 */
export function logStartupFailure(error: unknown): void {
  // Configuration errors are a readable message already; a stack would bury it.
  const lines =
    error instanceof InvalidEnvironmentError
      ? error.problems
      : [{ variable: undefined, message: error instanceof Error ? error.message : String(error) }];
  if (process.stdout.isTTY) {
    for (const { message } of lines) console.error(message);
    return;
  }
  const logger = pino(pino.destination({ dest: 1, sync: true }));
  for (const { variable, message } of lines) logger.fatal({ variable }, message);
}
