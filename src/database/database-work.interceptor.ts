import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, lastValueFrom, type Observable } from 'rxjs';
import type { DatabaseVariables } from './database.variables.js';
import { PerRoute } from '../http/per-route.js';
import { retryOnce, type RetryPolicy } from './database-retry.js';
import { SAFE_TO_REPEAT } from './safe-to-repeat.decorator.js';
import { ownerParty, withDeadline } from './request-scope.js';

/** The deadline of a request that arrived `elapsedMs` ago. */
export function requestDeadline(budgetMs: number, elapsedMs: number): number {
  return Date.now() - elapsedMs + budgetMs;
}

/**
 * Runs a route's handler within the request's deadline for database work,
 * DB_REQUEST_DEADLINE_MS from its arrival, and runs it once more after a
 * database failure that its method makes safe to repeat: a GET, a route
 * marked @SafeToRepeat(), or any route when nothing of the failed attempt
 * ran. A streamed list's pages after the first are outside this: they are
 * read while the answer is written (on behalf of the same owner).
 *
 * Registered (APP_INTERCEPTOR) on PostgreSQL only (keepsDeadlines): SQLite
 * runs in the process, where a connection is never lost and its busy errors
 * come after its own wait, so there is neither a deadline to keep nor a
 * failure to retry, and an interceptor that only passes requests on still
 * costs each of them its share of Nest's interceptor chain.
 */
@Injectable()
export class DatabaseWorkInterceptor implements NestInterceptor {
  private readonly budgetMs: number;
  private readonly safeToRepeat = new PerRoute(
    (handler, classRef) =>
      this.reflector.getAllAndOverride<boolean>(SAFE_TO_REPEAT, [handler, classRef]) === true,
  );

  constructor(
    private readonly reflector: Reflector,
    config: ConfigService<DatabaseVariables, true>,
  ) {
    this.budgetMs = config.get('DB_REQUEST_DEADLINE_MS', { infer: true });
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const expiresAt = requestDeadline(this.budgetMs, http.getResponse<FastifyReply>().elapsedTime);
    const repeatable = request.method === 'GET' || this.safeToRepeat.get(context);
    const policy: RetryPolicy = repeatable ? 'repeatable' : 'if-nothing-ran';
    const work = () => retryOnce(policy, () => lastValueFrom(next.handle()));
    // The owner, set by authentication: the pool shares its connections between owners.
    const owner = (request as { user?: { owner?: string } }).user?.owner;
    return from(withDeadline(expiresAt, work, owner === undefined ? undefined : ownerParty(owner)));
  }
}
