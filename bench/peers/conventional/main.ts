/**
 * The conventional peer of the benchmark: the Plant Store API written the way
 * the NestJS documentation teaches, with no tuning: the default Express
 * adapter, TypeORM repositories, a global ValidationPipe and
 * ClassSerializerInterceptor, a passport-http-bearer strategy looking the
 * token up through a repository, nestjs-pino's default pino-http request log,
 * ThrottlerGuard with its in-memory storage, helmet() and a prom-client
 * histogram in an interceptor. It is what a team would have without this
 * project; `npm run bench` compares the service with it. Not part of the
 * service. Run by bench/run.ts as a child process (environment: settings.ts).
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import { settings } from './settings.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule, { bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.use(helmet());
  app.enableShutdownHooks();
  await app.listen(settings.port, settings.host);
}

await bootstrap();
