/**
 * The service's per-request features, done the plain Fastify way, for the
 * same-work reference: a request log line through Fastify's own pino logger,
 * a request id (echoed or generated), fixed security headers, a prom-client
 * histogram observed in onResponse, and a per-owner request quota with
 * X-RateLimit-* headers. What each one sends was copied from the service's
 * answers (`curl -i`); how it is done is the framework's usual way, untuned.
 */
import { randomUUID } from 'node:crypto';
import {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import pino from 'pino';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { HttpError } from './contract.js';

/** The environment the features read, with the service's defaults. */
export interface FeatureSettings {
  logLevel: string;
  rateLimitMax: number;
  rateLimitWindowMs: number;
}

export function featureSettings(env: NodeJS.ProcessEnv): FeatureSettings {
  return {
    logLevel: env.LOG_LEVEL ?? 'info',
    rateLimitMax: Number(env.RATE_LIMIT_MAX ?? 1200),
    rateLimitWindowMs: Number(env.RATE_LIMIT_WINDOW_MS ?? 60_000),
  };
}

/** The service's headers on every JSON answer (src/common/http/security-headers.ts). */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

/**
 * Fastify's request log with the service's one line per request: no
 * "incoming request" line, and the "request completed" line carrying what the
 * service's line carries (method, URL, route pattern, status, owner, time).
 */
class RequestLine extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply) {
    const line = {
      req: { method: request.method, url: request.url, route: request.routeOptions.url },
      res: { statusCode: reply.statusCode },
      owner: request.owner || undefined,
      responseTime: reply.elapsedTime,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

/**
 * Fastify options for the logger and the request id. The service writes its
 * lines as JSON to stdout asynchronously (sonic-boom, sync: false); so does
 * this logger.
 */
export function loggerOptions(settings: FeatureSettings): FastifyServerOptions {
  return {
    logger: { level: settings.logLevel, stream: pino.destination({ dest: 1, sync: false }) },
    logController: new RequestLine(),
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
  };
}

/** Counts one request of an owner against its quota and sets the X-RateLimit-* headers. */
export type Quota = (owner: string, reply: FastifyReply) => void;

/** A fixed window per owner, in memory, as the service counts without Redis. */
function quotaOf(settings: FeatureSettings): Quota {
  const windows = new Map<string, { hits: number; endsAt: number }>();
  return (owner, reply) => {
    const now = Date.now();
    let window = windows.get(owner);
    if (window === undefined || window.endsAt <= now) {
      window = { hits: 0, endsAt: now + settings.rateLimitWindowMs };
      windows.set(owner, window);
    }
    window.hits += 1;
    const reset = Math.ceil((window.endsAt - now) / 1000);
    void reply.headers({
      'x-ratelimit-limit': settings.rateLimitMax,
      'x-ratelimit-remaining': Math.max(0, settings.rateLimitMax - window.hits),
      'x-ratelimit-reset': reset,
    });
    if (window.hits > settings.rateLimitMax) {
      throw new HttpError(429, 'too many requests', { 'retry-after': String(reset) });
    }
  };
}

/** Adds the hooks of every feature but the quota, and returns the quota for the routes to count. */
export function addFeatures(app: FastifyInstance, settings: FeatureSettings): Quota {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  app.addHook('onRequest', async (request, reply) => {
    void reply.headers(SECURITY_HEADERS).header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    duration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: reply.statusCode,
      },
      reply.elapsedTime / 1000,
    );
  });
  app.get('/metrics', async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
  return quotaOf(settings);
}
