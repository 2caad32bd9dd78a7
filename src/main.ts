import { Logger } from '@nestjs/common';
import { createApp } from './app.setup.js';
import { installGracefulShutdown } from './lifecycle/graceful-shutdown.js';

async function bootstrap(): Promise<void> {
  const { app, env } = await createApp();
  const logger = new Logger('PlantStore');
  installGracefulShutdown(app, env.SHUTDOWN_TIMEOUT_MS, new Logger('Shutdown'));
  await app.listen({ port: env.PORT, host: env.HOST });
  const url = await app.getUrl();
  logger.log(`Listening on ${url} (Swagger UI: ${url}/docs)`);
}

bootstrap().catch((error: unknown) => {
  // Configuration errors are already a readable message; do not bury it in a stack.
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
