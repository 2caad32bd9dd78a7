import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { PerRoute } from '../http/per-route.js';
import { AUTH_FAILURE_LIMITER, type AuthFailureLimiter } from './auth-failure.limiter.js';
import { AuthChallengeException, InsufficientScopeException } from './auth-challenge.exception.js';
import type { AuthenticatedCaller } from './caller-owner.decorator.js';
import { IS_PUBLIC } from '../http/public.decorator.js';
import { REQUIRED_SCOPE, type Scope } from './required-scope.decorator.js';
import { TooManyRequestsException } from './too-many-requests.exception.js';

/**
 * The global guard (APP_GUARD): every route needs a bearer token unless it is
 * marked @Public(), so a new route cannot forget authentication. A client
 * address (`request.ip`, behind a proxy as TRUST_PROXY yields it) with too many
 * failed authentications in the window is refused with a 429 before its token
 * is looked at; without a failure budget (rate limiting off) nothing is counted.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  private readonly isPublic = new PerRoute(
    (handler, classRef) =>
      this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [handler, classRef]) ===
      true,
  );
  private readonly requiredScope = new PerRoute((handler, classRef) =>
    this.reflector.getAllAndOverride<Scope | undefined>(REQUIRED_SCOPE, [handler, classRef]),
  );

  constructor(
    private readonly reflector: Reflector,
    @Inject(AUTH_FAILURE_LIMITER) private readonly failures: AuthFailureLimiter | null,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.isPublic.get(context)) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (this.failures) {
      const pending = this.failures.retryAfter(request.ip);
      const wait = typeof pending === 'number' ? pending : await pending;
      if (wait > 0) {
        throw new TooManyRequestsException(
          'too many failed authentications from this client: retry after the number of seconds in Retry-After',
          wait,
        );
      }
    }
    try {
      await super.canActivate(context);
    } catch (error) {
      if (this.failures && error instanceof AuthChallengeException) {
        await this.failures.recordFailure(request.ip);
      }
      throw error;
    }
    // Only an access token whose scopes are checked has them (AUTH_JWT_REQUIRE_SCOPES).
    const scope = this.requiredScope.get(context);
    const { scopes } = (request as unknown as { user: AuthenticatedCaller }).user;
    if (scope && scopes && !scopes.has(scope)) throw new InsufficientScopeException(scope);
    return true;
  }

  /**
   * Nest's AuthGuard drops passport's challenge and throws a bare 401; the
   * contract wants `WWW-Authenticate`, with error="invalid_token" when a
   * token was sent but is unknown or revoked.
   */
  override handleRequest<TUser = AuthenticatedCaller>(
    error: unknown,
    user: TUser | false | null,
    info: unknown,
    _context: ExecutionContext,
    status?: unknown,
  ): TUser {
    // A failed token lookup (e.g. the database is down) goes on to the filter as it is.
    if (error instanceof Error) throw error;
    if (error) throw new Error(`token lookup failed: ${JSON.stringify(error)}`);
    if (user) return user;
    if (typeof info === 'string' && info.includes('invalid_token')) {
      throw new AuthChallengeException('the bearer token is unknown or revoked', 'invalid_token');
    }
    if (status === 400) {
      throw new AuthChallengeException('the Authorization header must be "Bearer <token>"');
    }
    throw new AuthChallengeException(
      'a bearer token is required: send "Authorization: Bearer <token>"',
    );
  }
}
