import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { loggedUrl } from './logged-url.js';
import { ROOT_LOGGER } from './root-logger.js';

/** The caller, as the bearer strategy leaves it on the request once a token checked out. */
interface WithCaller {
  user?: { owner?: string };
}

/**
 * One JSON line per request (id, method, URL, route pattern, status,
 * latency, owner), written by the pipeline's onResponse hook (app.setup.ts).
 *
 * Written here rather than by pino-http (nestjs-pino's middleware): that one
 * builds a child logger and an AsyncLocalStorage scope for every request,
 * which cost a fifth of a list request's CPU time (measured then; the figure is
 * in BENCHMARKS.md's git history). Everything
 * the line needs is on the Fastify request once the response is out, and a
 * line built from named fields cannot carry a header, so no redaction list is
 * needed for Authorization. Of its fields a client chooses the URL (redacted
 * and cut, see loggedUrl), the request id (taken only when at most 128 safe
 * characters, see request-id.ts) and the method (one of those Node's parser
 * knows); the others are the service's own.
 */
@Injectable()
export class RequestLog {
  constructor(@Inject(ROOT_LOGGER) private readonly logger: Logger) {}

  write(request: FastifyRequest, reply: FastifyReply): void {
    const status = reply.statusCode;
    const level = status >= 500 ? 'error' : 'info';
    if (!this.logger.isLevelEnabled(level)) return;
    this.logger[level](
      {
        req: {
          id: request.id,
          method: request.method,
          url: loggedUrl(request.url),
          route: request.routeOptions.url,
        },
        res: { statusCode: status },
        // Never the token itself.
        owner: (request as WithCaller).user?.owner,
        responseTime: reply.elapsedTime,
      },
      status >= 500 ? 'request errored' : 'request completed',
    );
  }
}
