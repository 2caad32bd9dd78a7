import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { RequestScope } from './request-scope.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the pipeline on arrival (app.setup.ts); its owner's once authenticated. */
    databaseScope: RequestScope | null;
  }
}

/**
 * The scope of the request's database work (request-scope.ts): its deadline,
 * and its owner's share of the pool. A handler passes it to the service
 * methods that work on the caller's behalf.
 */
export const CallerScope = createParamDecorator(
  (_: unknown, context: ExecutionContext): RequestScope =>
    context.switchToHttp().getRequest<FastifyRequest>().databaseScope ?? RequestScope.background,
);
