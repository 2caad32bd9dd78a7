import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

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
 * The headers of every JSON response (the API, errors, health, metrics): the
 * set the OWASP REST Security Cheat Sheet names for APIs. helmet's other
 * headers (cross-origin policies, Origin-Agent-Cluster, X-DNS-Prefetch-Control,
 * X-Download-Options, ...) only mean something to a browser rendering a page,
 * and each one is bytes that every client parses on every response.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
});

/**
 * helmet's headers for Swagger UI's pages (/docs), worked out once.
 *
 * None of them depends on the request, so instead of running helmet's
 * middleware chain on every request (eleven functions, each a setHeader on
 * the raw response) the app sets this fixed set through Fastify's
 * reply.headers(), written with the rest of the head in one writeHead.
 */
export function documentationSecurityHeaders(): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: unknown) {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let finished = false;
  documentationPolicy(
    {} as IncomingMessage,
    recorder as unknown as ServerResponse,
    (error?: unknown) => {
      if (error) throw error instanceof Error ? error : new Error('helmet failed');
      finished = true;
    },
  );
  // helmet's middleware is synchronous; if a version ever is not, fail at startup, not silently.
  if (!finished) throw new Error('helmet did not set its headers synchronously');
  return Object.freeze(headers);
}
