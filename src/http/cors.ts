import type { NestFastifyApplication } from '@nestjs/platform-fastify';

/** @fastify/cors's options, as Nest's Fastify adapter takes them. */
type FastifyCorsOptions = NonNullable<Parameters<NestFastifyApplication['enableCors']>[0]>;

/**
 * CORS for the browser origins CORS_ORIGINS names. @fastify/cors takes every
 * OPTIONS for a preflight, and answers one without `Origin` or
 * `Access-Control-Request-Method` with a text/plain 400 outside the Error
 * shape. Such a request is no preflight: CORS leaves it alone, and it goes on
 * as a request for no route (a 404 in the Error shape, unknown-route.ts).
 */
export function corsFor(origins: string[]): FastifyCorsOptions {
  const options: FastifyCorsOptions = {
    origin: origins,
    methods: ['GET', 'POST', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
    exposedHeaders: [
      'X-Request-Id',
      'Retry-After',
      'WWW-Authenticate',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'Link',
    ],
    maxAge: 600,
  };
  return {
    // @fastify/cors's documented per-request options.
    delegator: (request, callback) => {
      const notPreflight =
        request.method === 'OPTIONS' &&
        (request.headers.origin === undefined ||
          request.headers['access-control-request-method'] === undefined);
      callback(null, notPreflight ? { origin: false } : options);
    },
  };
}
