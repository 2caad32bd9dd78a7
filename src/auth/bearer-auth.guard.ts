import { type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { AuthChallengeException } from './auth-challenge.exception.js';
import type { AuthenticatedCaller } from './authenticated-owner.js';
import { IS_PUBLIC } from './public.decorator.js';

/**
 * The global guard (APP_GUARD): every route needs a bearer token unless it is
 * marked @Public(), so a new route cannot forget authentication.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    return isPublic ? true : super.canActivate(context);
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
