import { Logger } from '@nestjs/common';
import { createApp } from './app.setup.js';
import { installGracefulShutdown } from './lifecycle/graceful-shutdown.js';
import { logStartupFailure } from './logging/startup-failure.js';

/** Entry point of the service: `npm start`, `npm run start:prod`, the container. */
async function bootstrap(): Promise<void> {
  const { app, env } = await createApp();
  const logger = new Logger('PlantStore');
  installGracefulShutdown(
    app,
    { drainMs: env.SHUTDOWN_DRAIN_MS, timeoutMs: env.SHUTDOWN_TIMEOUT_MS },
    new Logger('Shutdown'),
  );
  await app.listen({ port: env.PORT, host: env.HOST });
  // app.getUrl() says 127.0.0.1 for a wildcard bind; log the address really bound.
  const { port } = app.getHttpServer().address() as { port: number };
  const host = env.HOST.includes(':') ? `[${env.HOST}]` : env.HOST;
  const wildcard = env.HOST === '0.0.0.0' || env.HOST === '::';
  const docs = `http://${wildcard ? '127.0.0.1' : host}:${port}/docs`;
  logger.log(
    `Listening on http://${host}:${port} (${wildcard ? 'all interfaces; ' : ''}Swagger UI: ${docs})`,
  );
}

bootstrap().catch((error: unknown) => {
  logStartupFailure(error);
  process.exit(1);
});
