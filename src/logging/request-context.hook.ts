import type { FastifyInstance } from 'fastify';

interface RawRequestFields {
  /** pino-http logs `req.id` as the request id when it is set. */
  id?: string;
  routePattern?: string;
}

/**
 * Every request gets its id (Fastify's genReqId: the client's X-Request-Id
 * when well-formed, else a UUID) echoed in the response, and hands id and
 * route pattern to the request log line, which pino-http writes from the raw
 * Node request.
 */
export function installRequestContext(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw as RawRequestFields;
    raw.id = request.id;
    raw.routePattern = request.routeOptions.url;
    void reply.header('X-Request-Id', request.id);
    done();
  });
}

export function routePatternOf(raw: object): string | undefined {
  return (raw as RawRequestFields).routePattern;
}
