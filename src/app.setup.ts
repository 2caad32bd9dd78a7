import { type LoggerService, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppModule } from './app.module.js';
import { type Environment, loadEnvironment } from './environment.js';
import { checkServiceVariables } from './config/service-variables.js';
import { OwnerRequests } from './auth/owner-requests.js';
import { RequestAuthenticator } from './auth/request-authenticator.js';
import { RequestScope } from './database/request-scope.js';
import { sendError } from './errors/http-error.filter.js';
import { unsupportedCharset } from './http/content-charset.js';
import { announcesBody, unsupportedContentEncoding } from './http/content-encoding.js';
import { isPublicRoute } from './http/public.decorator.js';
import { instead401, isUnknownRoute, unknownRouteRefusal } from './http/unknown-route.js';
import { jsonBodyParser } from './http/lossless-json.parser.js';
import { closeConnectionsInStages, readAtMost } from './http/lingering-close.js';
import { corsFor } from './http/cors.js';
import { fastifyAdapterFor, type RefusedBeforeRouting } from './http/fastify-adapter.js';
import { setSecurityHeaders } from './http/security-headers.js';
import { PinoNestLogger } from './logging/pino-nest.logger.js';
import { ShutdownState } from './lifecycle/shutdown-state.js';
import { RequestLog } from './logging/request-log.js';
import { createRootLogger } from './logging/root-logger.js';
import { MetricsService } from './metrics/metrics.service.js';
import { setupOpenApi } from './openapi/openapi.js';

export interface CreateAppOptions {
  /** Stands for the whole environment (tests, tools); without it, process.env and .env are read. */
  env?: Record<string, unknown>;
  /** false: no log output at all (tests, tools). Otherwise the app logs through pino. */
  logger?: LoggerService | LogLevel[] | false;
}

export interface CreatedApp {
  app: NestFastifyApplication;
  env: Environment;
}

/**
 * Builds the whole HTTP pipeline: used by main.ts, the e2e tests and the
 * OpenAPI export alike, so that what is tested is what runs.
 *
 * A request meets, in this order:
 *  1. Node's HTTP parser; what it refuses is answered by answerClientError.
 *  2. Fastify: request id (genReqId), routing; what it refuses before routing
 *     (a malformed URL) is authenticated as in step 3, then refused before its body.
 *  3. onRequest: X-Request-Id echoed (and Connection: close once shutting
 *     down), security headers, CORS (when configured), then authentication
 *     (RequestAuthenticator: failure budget, bearer token) unless the route is
 *     public, in the request's database scope (request-scope.ts), made on
 *     arrival and given its owner: a 401 or 429 leaves before the body is
 *     read, and so does the
 *     404 of a request for no route that authenticates no one; the owner's
 *     requests in flight are counted (OwnerRequests: a 429 past the bound); then a body
 *     in a Content-Encoding other than identity, or JSON in a charset other than UTF-8, is a 415.
 *  4. The JSON body parser (lossless: every digit of an int64 id survives).
 *  5. preHandler: a request whose client is gone is not handled (OwnerRequests).
 *  6. Nest (app.module.ts): BearerAuthGuard (takes step 3's verdict), RateLimitGuard,
 *     DtoValidationPipe, the controller (@RetriedOnce on its service); HttpErrorFilter
 *     for every error. Then onSend (OwnerRequests); onResponse: the log line, the histogram.
 *  7. The connection: closed in stages when the answer came before the body.
 */
/**
 * Answers a request before its body is read. A body that follows will not be
 * read: the connection closes rather than read it only to discard it (RFC 9112
 * section 9.6), in stages (see lingering-close.ts); for a request that
 * authenticates no one, after reading at most 64 KiB of it.
 */
function answerBeforeBody(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  unauthenticated = false,
) {
  if (announcesBody(request)) {
    void reply.header('Connection', 'close');
    if (unauthenticated) readAtMost(request.raw);
  }
  sendError(error, request, reply);
  return reply;
}

export async function createApp(options: CreateAppOptions = {}): Promise<CreatedApp> {
  const env = loadEnvironment(options.env);
  checkServiceVariables(env);
  // A request Fastify refuses before routing is answered as sendError words it;
  // once authentication exists (below), after it.
  const beforeRouting: RefusedBeforeRouting = { answer: sendError };
  const adapter = fastifyAdapterFor(env, beforeRouting);
  // Nest logs through pino from its first line: a start that fails (the
  // database unreachable) says why in the same JSON lines as the rest.
  const rootLogger = createRootLogger(env.LOG_LEVEL, env.NODE_ENV);
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(env, rootLogger),
    adapter,
    {
      // Nest's default parsers would accept text/plain and forms; only JSON is taken (else 415).
      bodyParser: false,
      logger: options.logger ?? new PinoNestLogger(rootLogger),
    },
  );
  const fastify = app.getHttpAdapter().getInstance();

  // Once shutdown has begun (SIGTERM's drain, then requests in flight), every
  // answer closes its connection: keep-alive clients reconnect to another instance.
  const shutdown = app.get(ShutdownState);
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('X-Request-Id', request.id);
    if (shutdown.shuttingDown) void reply.header('Connection', 'close');
    done();
  });
  fastify.addHook('onRequest', setSecurityHeaders);
  if (env.CORS_ORIGINS.length > 0) {
    app.enableCors(corsFor(env.CORS_ORIGINS));
  }

  // Authentication, and the failed-authentication budget, before a byte of the
  // body is read: an unauthenticated client must not make the service read and
  // parse up to BODY_LIMIT_BYTES (so 401 and 429 come before 413 and 415). The
  // global guard takes this verdict and stays the rule for every route
  // (deny by default). A request for no route (an unknown path or method,
  // `/plants/`, an OPTIONS without CORS) is authenticated too: without a
  // valid token it gets its 404 here, before its body, and that refusal is
  // paced like a 401; with one it goes on to Nest's 404 as any caller's
  // request does. A CORS preflight never comes here: the CORS hook, which
  // runs first, answers every OPTIONS when CORS_ORIGINS is set.
  // Then, still before the body, the owner's requests in flight are counted
  // (OwnerRequests): past FAIR_SHARE_MAX_IN_FLIGHT, a 429.
  const authenticator = app.get(RequestAuthenticator);
  const ownerRequests = env.FAIR_SHARE_ENABLED ? app.get(OwnerRequests) : undefined;
  // An authenticated request's database work has one scope (request-scope.ts),
  // which its handler takes with @CallerScope(): a deadline from its arrival,
  // and a party, its address's during the token lookup, then its owner's.
  fastify.decorateRequest('databaseScope', null);
  const arrived = (request: FastifyRequest, reply: FastifyReply) =>
    (request.databaseScope = RequestScope.arrival(
      env.DB_REQUEST_DEADLINE_MS,
      reply.elapsedTime,
      request.ip,
    ));
  fastify.addHook('onRequest', async (request, reply) => {
    if (isPublicRoute(request)) return;
    const scope = arrived(request, reply);
    let owner: string;
    try {
      ({ owner } = await authenticator.authenticate(request, reply));
    } catch (error) {
      const refusal = isUnknownRoute(request) ? unknownRouteRefusal(error, request) : error;
      return answerBeforeBody(refusal, request, reply, true);
    }
    request.databaseScope = scope.forOwner(owner);
    const tooMany = ownerRequests?.admit(owner, reply.raw);
    if (tooMany) return answerBeforeBody(tooMany, request, reply);
  });
  // A handler whose client hung up still runs, and its owner's place stays
  // taken until it answers; a request whose client is gone before its handler
  // starts is not handled (nothing answers it, nothing reads the answer).
  if (ownerRequests) {
    fastify.addHook('preHandler', (_request, reply, done) => {
      if (!ownerRequests.handling(reply.raw)) reply.hijack();
      done();
    });
    fastify.addHook('onSend', (_request, reply, payload, done) => {
      ownerRequests.answered(reply.raw);
      done(null, payload);
    });
  }
  // A request Fastify refuses before routing (a malformed URL) is authenticated
  // too, so that its refusal is paced like a 401 and its body is not read.
  beforeRouting.answer = (error, request, reply) => {
    arrived(request, reply);
    authenticator.authenticate(request, reply).then(
      () => answerBeforeBody(error, request, reply),
      (refusal: unknown) => answerBeforeBody(instead401(refusal, error), request, reply, true),
    );
  };
  fastify.addHook('onRequest', async (request, reply) => {
    const refusal = unsupportedContentEncoding(request) ?? unsupportedCharset(request);
    if (refusal) return answerBeforeBody(refusal, request, reply);
  });

  fastify.removeAllContentTypeParsers();
  app.useBodyParser('application/json', { bodyLimit: env.BODY_LIMIT_BYTES }, jsonBodyParser);

  const requestLog = app.get(RequestLog);
  const metrics = env.METRICS_ENABLED ? app.get(MetricsService) : undefined;
  fastify.addHook('onResponse', (request, reply, done) => {
    requestLog.write(request, reply);
    metrics?.observeRequest(
      request.method,
      request.routeOptions.url,
      reply.statusCode,
      reply.elapsedTime,
    );
    done();
  });

  // A client still sending a body that was refused (413) gets to read the answer.
  closeConnectionsInStages(fastify.server);

  // A worker serves health and metrics only: no API, so no document of one.
  if (env.APP_ROLE !== 'worker') setupOpenApi(app);
  return { app, env };
}
