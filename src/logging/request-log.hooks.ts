import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { AuthenticatedCaller } from '../auth/authenticated-owner.js';
import { redactUrl } from './log-redaction.js';
import { ROOT_LOGGER } from './root-logger.js';

/**
 * One JSON line per request (id, method, URL, route pattern, status,
 * latency, owner), written from Fastify's onResponse hook, and the request id
 * (Fastify's genReqId: the client's X-Request-Id when well-formed, else a
 * UUID) echoed in the response.
 *
 * Written here rather than by pino-http (nestjs-pino's middleware): that one
 * builds a child logger and an AsyncLocalStorage scope for every request,
 * which cost a fifth of a list request's CPU time (BENCHMARKS.md). Everything
 * the line needs is on the Fastify request once the response is out.
 */
@Injectable()
export class RequestLogHooks implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    const logger = this.logger;
    fastify.addHook('onRequest', (request, reply, done) => {
      void reply.header('X-Request-Id', request.id);
      done();
    });
    fastify.addHook('onResponse', (request, reply, done) => {
      const status = reply.statusCode;
      const level = status >= 500 ? 'error' : 'info';
      if (logger.isLevelEnabled(level)) {
        logger[level](
          {
            req: {
              id: request.id,
              method: request.method,
              url: redactUrl(request.url),
              route: request.routeOptions.url,
            },
            res: { statusCode: status },
            // Set by the bearer strategy once the token checked out; never the token itself.
            owner: (request as { user?: AuthenticatedCaller }).user?.owner,
            responseTime: reply.elapsedTime,
          },
          status >= 500 ? 'request errored' : 'request completed',
        );
      }
      done();
    });
  }
}
