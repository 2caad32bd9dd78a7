import type { IncomingMessage } from 'node:http';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpVariables } from './http.variables.js';
import { answerClientError } from '../errors/client-error.handler.js';
import { MAX_PATH_PARAMETER_LENGTH } from '../validation/int64.js';
import { REQUEST_ID_HEADER, requestIdFrom } from './request-id.js';
import { setSecurityHeaders } from './security-headers.js';

/** How often, at most, Node looks for requests past HTTP_REQUEST_TIMEOUT_MS. */
const REQUEST_TIMEOUT_CHECK_MS = 1000;

/**
 * Answers a request Fastify refuses before routing (a malformed URL, an
 * over-long path parameter), which meets none of the onRequest hooks: the
 * pipeline (app.setup.ts) gives it the authentication step they would have.
 */
export interface RefusedBeforeRouting {
  answer(error: Error, request: FastifyRequest, reply: FastifyReply): void;
}

/** The HTTP server's settings: timeouts, limits, proxies, request ids, errors before routing. */
export function fastifyAdapterFor(
  env: HttpVariables,
  beforeRouting: RefusedBeforeRouting,
): FastifyAdapter {
  const trusted = env.TRUST_PROXY;
  return new FastifyAdapter({
    bodyLimit: env.BODY_LIMIT_BYTES,
    // A slow or stalled client cannot hold a connection forever.
    requestTimeout: env.HTTP_REQUEST_TIMEOUT_MS,
    // Node checks for requests past their timeout every 30 s by default, so a
    // 30 s timeout took up to 60 s; checked every second, a 408 comes within
    // HTTP_REQUEST_TIMEOUT_MS and one second. The timeout is given to Node's
    // constructor as well: set afterwards (as Fastify sets it), Node 20 applies
    // it to a request's head but never to a slow body.
    http: {
      requestTimeout: env.HTTP_REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(REQUEST_TIMEOUT_CHECK_MS, env.HTTP_REQUEST_TIMEOUT_MS),
    },
    connectionTimeout: env.HTTP_IDLE_TIMEOUT_MS,
    keepAliveTimeout: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    requestIdHeader: false,
    // A longer path parameter is a 414; the id parser takes leading zeros up to it.
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    // request.ip is the client's address behind the proxies TRUST_PROXY names, not the proxy's.
    // A hop count as the function Fastify makes of one (its adapter's type leaves numbers out).
    trustProxy:
      typeof trusted === 'number' ? (_address: string, hop: number) => hop < trusted : trusted,
    // While closing, the listener is gone (new connections are refused) and a
    // request still arriving on an open keep-alive connection is served like any
    // in flight; Nest's and Fastify's own 503 for it has a body outside the contract.
    return503OnClosing: false,
    genReqId: (request: IncomingMessage) => requestIdFrom(request.headers[REQUEST_ID_HEADER]),
    // Errors Fastify raises before routing get the headers the onRequest hooks
    // would have set (those hooks never run for them), then beforeRouting's answer.
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => {
      void reply.header('X-Request-Id', request.id);
      setSecurityHeaders(request, reply, () => beforeRouting.answer(error, request, reply));
    },
    clientErrorHandler: answerClientError,
  });
}
