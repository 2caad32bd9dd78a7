import type { HeaderObject, OpenAPIObject } from '@nestjs/swagger';

/** Set on every response by the pipeline's onRequest hook (app.setup.ts). */
const REQUEST_ID: Record<string, HeaderObject> = {
  'X-Request-Id': {
    description:
      "The request's id, also in its log line: the client's X-Request-Id when it is 1-128 characters of A-Z a-z 0-9 . _ : -, else a new UUID",
    required: true,
    schema: { type: 'string' },
  },
};

/** Set by @nestjs/throttler's ThrottlerGuard (RateLimitGuard) on every request it counts. */
const RATE_LIMIT: Record<string, HeaderObject> = {
  'X-RateLimit-Limit': {
    description:
      'Requests the token owner may make in the current window (sent while rate limiting is on, also on the errors answered after authentication)',
    required: false,
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window',
    required: false,
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the current window ends',
    required: false,
    schema: { type: 'integer' },
  },
};

/**
 * Declares the headers that the HTTP pipeline, not an operation, adds:
 * X-Request-Id on every response, and on every success of an authenticated
 * operation (the rate limit counts per token owner, after authentication)
 * the X-RateLimit-* headers. Declared here, once, rather than on each
 * operation, where a new operation could leave them out.
 */
export function declarePipelineHeaders(document: OpenAPIObject): void {
  for (const path of Object.values(document.paths)) {
    for (const operation of [path.get, path.put, path.post, path.delete, path.patch]) {
      if (!operation) continue;
      const authenticated = (operation.security ?? []).some((scheme) => 'bearerAuth' in scheme);
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!response || !('description' in response)) continue; // a $ref has no headers of its own
        const success = status.startsWith('2');
        response.headers = {
          ...response.headers,
          ...REQUEST_ID,
          ...(authenticated && success ? RATE_LIMIT : {}),
        };
      }
    }
  }
}
