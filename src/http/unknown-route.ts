import { HttpException, NotFoundException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * Whether no route takes the request: none matched (an unknown path, or a
 * method its path does not have), or `/plants/` matched `/plants/:id` with an
 * empty id, which Nest's adapter then answers as an unknown route
 * (requireNonEmptyParams), or an OPTIONS that is no CORS preflight.
 */
export function isUnknownRoute(request: FastifyRequest): boolean {
  if (request.is404) return true;
  // @fastify/cors's catch-all OPTIONS route (with CORS_ORIGINS set): it
  // answers preflights itself, so an OPTIONS that reaches this is for no route.
  if (request.method === 'OPTIONS' && request.routeOptions.url === '*') return true;
  const params = (request.params ?? {}) as Record<string, unknown>;
  return Object.values(params).includes('');
}

/**
 * The answer to a request for no route that authenticates no one: the 404
 * Nest gives any caller for an unknown route, in the same words, rather than
 * a 401 that would say the route exists. A 429 of the failure budget, a 400
 * and a failure of the service stand as they are.
 */
export function unknownRouteRefusal(error: unknown, request: FastifyRequest): unknown {
  return instead401(error, new NotFoundException(`Cannot ${request.method} ${request.url}`));
}

/**
 * The refusal of a request that authentication refused but that would be
 * refused anyway, as `refusal` (an unknown route's 404, a malformed URL's
 * 400): that one stands for a 401; a 429, a 400 and a failure stand as they are.
 */
export function instead401(error: unknown, refusal: unknown): unknown {
  return error instanceof HttpException && error.getStatus() === 401 ? refusal : error;
}
