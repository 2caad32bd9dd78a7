import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { httpRequestOf } from '../http/http-arguments.js';
import type { RequestScope } from './request-scope.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the pipeline on arrival (app.setup.ts); its owner's once authenticated. */
    databaseScope: RequestScope | null;
  }
}

/**
 * The scope of the request's database work (request-scope.ts): its deadline,
 * and its owner's share of the pool. A handler passes it to the service
 * methods that work on the caller's behalf. Only an authenticated request
 * has one: on a public route it is a programming error, not background work.
 */
export const CallerScope = createParamDecorator(
  (_: unknown, context: ExecutionContext): RequestScope => {
    const scope = httpRequestOf<FastifyRequest>(context).databaseScope;
    if (!scope) throw new Error('@CallerScope() on a request without a database scope');
    return scope;
  },
);
