import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

const policy = helmet({
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
 * helmet's response headers for this app's policy, worked out once.
 *
 * None of helmet's headers depends on the request, so instead of running its
 * middleware chain on every request (eleven functions, each a setHeader on the
 * raw response: about 5% of a list request's CPU, BENCHMARKS.md) the app sets
 * this fixed set through Fastify's reply.headers(), written with the rest of
 * the head in one writeHead.
 */
export function securityHeaders(): Readonly<Record<string, string>> {
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
  policy({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error('helmet failed');
    finished = true;
  });
  // helmet's middleware is synchronous; if a version ever is not, fail at startup, not silently.
  if (!finished) throw new Error('helmet did not set its headers synchronously');
  return Object.freeze(headers);
}
