import type { Server } from 'node:http';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { ShutdownState } from './shutdown-state.js';

const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface ShutdownTimes {
  /** SIGTERM only: how long to go on serving before the listener closes. */
  drainMs: number;
  /** Once it closes: how long requests in flight may take. */
  timeoutMs: number;
}

/**
 * On SIGTERM, the way a rolling restart stops an instance: readiness turns
 * false at once, and for `drainMs` the instance goes on accepting and
 * serving, every answer with Connection: close (app.setup.ts), so that a load
 * balancer that routes by readiness takes it out before its listener goes and
 * keep-alive clients reconnect elsewhere. Then the server stops taking
 * connections, at once: Nest closes its HTTP server only after every
 * module's onModuleDestroy, and the webhook dispatcher's lets deliveries in
 * flight go on for a while there. Requests in flight finish (Fastify's close
 * waits for them), the database closes (Nest's shutdown hooks) and the
 * process exits 0. Past
 * `timeoutMs` after the close began it exits 1 rather than hang. SIGINT
 * (Ctrl-C at a terminal) skips the drain.
 *
 * `logger` carries its own context (main.ts passes `new Logger('Shutdown')`):
 * a context given per call to a Logger that has one already is not the one
 * Nest hands on last, so it was lost.
 */
export function installGracefulShutdown(
  app: INestApplication,
  times: ShutdownTimes,
  logger: LoggerService,
  exit: (code: number) => void = (code) => process.exit(code),
  onSignal: (signal: string, stop: () => void) => void = (signal, stop) => {
    process.once(signal, stop);
  },
): void {
  let stopping = false;
  const close = () => {
    logger.log(`closing: finishing requests in flight (at most ${times.timeoutMs} ms)`);
    const deadline = setTimeout(() => {
      logger.error(`requests still in flight after ${times.timeoutMs} ms: exiting anyway`);
      exit(1);
    }, times.timeoutMs);
    deadline.unref();
    // Fastify's own close, later, still waits for the connections left open.
    (app.getHttpServer() as Server).close();
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
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.get(ShutdownState).begin();
    const drainMs = signal === 'SIGTERM' ? times.drainMs : 0;
    if (drainMs === 0) {
      logger.log(`${signal} received`);
      close();
      return;
    }
    logger.log(`${signal} received: not ready; serving with Connection: close for ${drainMs} ms`);
    setTimeout(close, drainMs);
  };
  for (const signal of SHUTDOWN_SIGNALS) onSignal(signal, () => stop(signal));
}
