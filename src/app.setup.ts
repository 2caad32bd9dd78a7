import { type LoggerService, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppModule } from './app.module.js';
import { sendError } from './common/errors/http-error.filter.js';
import { parseJsonBody } from './common/json/lossless-json.parser.js';
import type { Environment } from './config/environment.js';
import { loadEnvironment } from './config/load-environment.js';
import { setupOpenApi } from './openapi/openapi.js';

export interface CreateAppOptions {
  /** Stands for the whole environment (tests, tools); without it, process.env and .env are read. */
  env?: Record<string, unknown>;
  logger?: LoggerService | LogLevel[] | false;
}

export interface CreatedApp {
  app: NestFastifyApplication;
  env: Environment;
}

/**
 * Builds the whole HTTP pipeline: used by main.ts, the e2e tests and the
 * OpenAPI export alike, so that what is tested is what runs.
 */
export async function createApp(options: CreateAppOptions = {}): Promise<CreatedApp> {
  const env = loadEnvironment(options.env);
  const adapter = new FastifyAdapter({
    bodyLimit: env.BODY_LIMIT_BYTES,
    // Errors Fastify raises before routing (e.g. a malformed URL) get the contract's shape too.
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) =>
      sendError(error, request, reply),
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(env), adapter, {
    // Nest's default parsers would accept text/plain and forms; only JSON is taken (else 415).
    bodyParser: false,
    logger: options.logger,
  });
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeAllContentTypeParsers();
  // JSON.parse rounds integers above 2^53; ids need every digit.
  app.useBodyParser(
    'application/json',
    { bodyLimit: env.BODY_LIMIT_BYTES },
    (_request: unknown, body: Buffer, done: (error: Error | null, parsed?: unknown) => void) => {
      let parsed: unknown;
      try {
        parsed = parseJsonBody(body);
      } catch (error) {
        done(error as Error);
        return;
      }
      done(null, parsed);
    },
  );
  setupOpenApi(app);
  return { app, env };
}
