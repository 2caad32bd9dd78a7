import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { httpReplyOf, httpRequestOf } from '../http/http-arguments.js';
import { PerRoute } from '../http/per-route.js';
import { InsufficientScopeException } from './auth-challenge.exception.js';
import type { AuthenticatedCaller } from './caller-owner.decorator.js';
import { IS_PUBLIC } from '../http/public.decorator.js';
import { RequestAuthenticator } from './request-authenticator.js';
import { REQUIRED_SCOPE, type Scope } from './required-scope.decorator.js';

/**
 * The global guard (APP_GUARD): every route needs a bearer token unless it is
 * marked @Public(), so a new route cannot forget authentication. The
 * pipeline's onRequest hook has usually authenticated the request already,
 * before its body was read (see app.setup.ts); the guard takes that verdict,
 * or reaches it itself for a route the hook did not know, and checks the
 * scope the route requires.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
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
    private readonly authenticator: RequestAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.isPublic.get(context)) return true;
    const request = httpRequestOf<FastifyRequest & { user?: AuthenticatedCaller }>(context);
    const caller = await this.authenticator.authenticate(
      request,
      httpReplyOf<FastifyReply>(context),
    );
    request.user = caller;
    // Only an access token whose scopes are checked has them (AUTH_JWT_REQUIRE_SCOPES).
    const scope = this.requiredScope.get(context);
    if (scope && caller.scopes && !caller.scopes.has(scope)) {
      throw new InsufficientScopeException(scope);
    }
    return true;
  }
}
