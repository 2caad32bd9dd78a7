import type { INestApplication, LoggerService } from '@nestjs/common';
import { ShutdownState } from './shutdown-state.js';

const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * On SIGTERM or SIGINT: readiness turns false at once, the server stops
 * taking connections, requests in flight finish (Fastify's close waits for
 * them), then the database closes (Nest's shutdown hooks) and the process
 * exits 0. Past `timeoutMs` it exits 1 rather than hang.
 *
 * `logger` carries its own context (main.ts passes `new Logger('Shutdown')`):
 * a context given per call to a Logger that has one already is not the one
 * Nest hands on last, so it was lost.
 */
export function installGracefulShutdown(
  app: INestApplication,
  timeoutMs: number,
  logger: LoggerService,
  exit: (code: number) => void = (code) => process.exit(code),
  onSignal: (signal: string, stop: () => void) => void = (signal, stop) => {
    process.once(signal, stop);
  },
): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.get(ShutdownState).begin();
    logger.log(`${signal} received: finishing requests in flight (at most ${timeoutMs} ms)`);
    const deadline = setTimeout(() => {
      logger.error(`requests still in flight after ${timeoutMs} ms: exiting anyway`);
      exit(1);
    }, timeoutMs);
    deadline.unref();
    app.close().then(
      () => {
        clearTimeout(deadline);
        logger.log('stopped cleanly');
        exit(0);
      },
      (error: unknown) => {
        logger.error('shutdown failed', error instanceof Error ? error.stack : String(error));
        exit(1);
      },
    );
  };
  for (const signal of SHUTDOWN_SIGNALS) onSignal(signal, () => stop(signal));
}
