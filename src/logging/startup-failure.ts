import pino from 'pino';

/**
 * The last line of a start that failed (bad configuration, the database
 * unreachable): a JSON line like every other, for the log pipeline that needs
 * it most then, unless a person reads it on a terminal. Written synchronously:
 * the process exits right after.
 */
export function logStartupFailure(error: unknown): void {
  // Configuration errors are a readable message already; a stack would bury it.
  const message = error instanceof Error ? error.message : String(error);
  if (process.stdout.isTTY) {
    console.error(message);
    return;
  }
  pino(pino.destination({ dest: 1, sync: true })).fatal(message);
}
