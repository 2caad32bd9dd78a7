import { SetMetadata } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';

export const IS_PUBLIC = 'plant-store:public';

/**
 * The same mark in the route's Fastify config: the pipeline authenticates in
 * an onRequest hook, before the body is read and before Nest knows the
 * route's handler, so Nest's metadata is out of its reach there.
 */
const PUBLIC_ROUTE_CONFIG = 'plantStorePublic';

const publicRouteConfig = RouteConfig({ [PUBLIC_ROUTE_CONFIG]: true });

/**
 * Opens a route to callers without a token. Everything else requires one (the
 * guard is global, and so is the onRequest hook). On a class it opens every
 * handler of the class: Nest's Fastify adapter reads route config from
 * handlers only.
 */
export const Public =
  (): MethodDecorator & ClassDecorator =>
  (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      SetMetadata(IS_PUBLIC, true)(target, key as string | symbol, descriptor);
      publicRouteConfig(target, key as string | symbol, descriptor);
      return;
    }
    SetMetadata(IS_PUBLIC, true)(target as () => unknown);
    const prototype = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = Object.getOwnPropertyDescriptor(prototype, name);
      if (name !== 'constructor' && typeof handler?.value === 'function') {
        publicRouteConfig(prototype, name, handler);
      }
    }
  };

/** Marks a route registered on Fastify directly (the OpenAPI document and its UI) as public. */
export function markPublic(config: Record<string, unknown> | undefined): Record<string, unknown> {
  return { ...config, [PUBLIC_ROUTE_CONFIG]: true };
}

/** Whether the request's route is open to callers without a token (see Public). */
export function isPublicRoute(request: FastifyRequest): boolean {
  return (
    (request.routeOptions.config as unknown as Record<string, unknown>)[PUBLIC_ROUTE_CONFIG] ===
    true
  );
}
