import type { ThrottlerModuleOptions, ThrottlerStorage } from '@nestjs/throttler';

/**
 * What the rate limit reads from a request. The bearer guard runs first and
 * sets `user` on an authenticated request; typed here, not imported from
 * auth/, so that neither folder depends on the other.
 */
interface ThrottledRequest {
  user?: { owner: string };
  ip: string;
}

export interface QuotaSettings {
  windowMs: number;
  maxRequests: number;
  storage: ThrottlerStorage;
}

/**
 * @nestjs/throttler's options for the request quota, used by the library's
 * own ThrottlerGuard (RateLimitGuard): one budget per token owner across all
 * routes (per client address, `request.ip` as TRUST_PROXY yields it, without
 * an owner).
 */
export function throttlerOptions({
  windowMs,
  maxRequests,
  storage,
}: QuotaSettings): ThrottlerModuleOptions {
  return {
    throttlers: [{ name: 'default', ttl: windowMs, limit: maxRequests }],
    storage,
    getTracker: (request: Record<string, unknown>) => {
      const { user, ip } = request as unknown as ThrottledRequest;
      return user ? `owner:${user.owner}` : `ip:${ip}`;
    },
    // The library's default key is per route; the budget is per caller.
    generateKey: (_context, tracker, name) => `${name}:${tracker}`,
    errorMessage: 'too many requests: retry after the number of seconds in Retry-After',
  };
}
