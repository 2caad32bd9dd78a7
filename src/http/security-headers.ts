import type { FastifyReply, FastifyRequest } from 'fastify';
import helmet from 'helmet';

/**
 * The headers of every JSON response (the API, errors, health, metrics): the
 * set the OWASP REST Security Cheat Sheet names for APIs, as constants. helmet's
 * other headers (cross-origin policies, Origin-Agent-Cluster, ...) only mean
 * something to a browser rendering a page.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
});

/** helmet's defaults for Swagger UI's pages (/docs), with a CSP that lets Swagger UI run. */
const documentationPolicy = helmet({
  contentSecurityPolicy: {
    directives: {
      defaultSrc: ["'self'"],
      // Swagger UI (/docs) styles itself inline and shows data: images.
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      scriptSrc: ["'self'"],
      // Plain-HTTP local use (and Swagger UI on it) must keep working; TLS is the proxy's job.
      upgradeInsecureRequests: null,
    },
  },
});

/**
 * The pipeline's security-header step (an onRequest hook): Swagger UI's pages
 * get helmet's browser headers through helmet's own middleware, every other
 * response the API set.
 */
export function setSecurityHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  done: () => void,
): void {
  if (request.url.startsWith('/docs')) {
    documentationPolicy(request.raw, reply.raw, done);
    return;
  }
  void reply.headers(API_SECURITY_HEADERS);
  done();
}
