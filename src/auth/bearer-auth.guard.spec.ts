import { type ExecutionContext, type Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { AuthChallengeException, InsufficientScopeException } from './auth-challenge.exception.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import type { AuthenticatedCaller } from './caller-owner.decorator.js';
import { Public } from '../http/public.decorator.js';
import type { RequestAuthenticator } from './request-authenticator.js';
import { RequiredScope } from './required-scope.decorator.js';

class Routes {
  @Public()
  open(): void {}

  closed(): void {}

  @RequiredScope('plants:write')
  writes(): void {}
}

@Public()
class OpenRoutes {
  probe(): void {}
}

const contextFor = (
  handler: () => void,
  request: object = {},
  classRef: object = Routes,
): ExecutionContext => new ExecutionContextHost([request, {}], classRef as Type, handler);

/** An authenticator with a fixed verdict, counting how often it is asked. */
const authenticatorOf = (verdict: () => Promise<AuthenticatedCaller>) => {
  const calls: FastifyRequest[] = [];
  const authenticator = {
    authenticate: (request: FastifyRequest) => {
      calls.push(request);
      return verdict();
    },
  } as unknown as RequestAuthenticator;
  return { authenticator, calls };
};

describe('BearerAuthGuard', () => {
  it('lets @Public() routes, on a handler or a whole class, through without authenticating', async () => {
    const { authenticator, calls } = authenticatorOf(() => Promise.reject(new Error('asked')));
    const guard = new BearerAuthGuard(new Reflector(), authenticator);
    expect(await guard.canActivate(contextFor(Routes.prototype.open))).toBe(true);
    expect(await guard.canActivate(contextFor(OpenRoutes.prototype.probe, {}, OpenRoutes))).toBe(
      true,
    );
    expect(calls).toHaveLength(0);
  });

  it('authenticates every other route (deny by default) and puts the caller on the request', async () => {
    const { authenticator, calls } = authenticatorOf(async () => ({ owner: 'alice' }));
    const guard = new BearerAuthGuard(new Reflector(), authenticator);
    const request: { user?: AuthenticatedCaller } = {};
    expect(await guard.canActivate(contextFor(Routes.prototype.closed, request))).toBe(true);
    expect(calls).toEqual([request]);
    expect(request.user).toEqual({ owner: 'alice' });
  });

  it("passes on the authenticator's refusal", async () => {
    const refusal = new AuthChallengeException('a bearer token is required');
    const { authenticator } = authenticatorOf(() => Promise.reject(refusal));
    const guard = new BearerAuthGuard(new Reflector(), authenticator);
    await expect(guard.canActivate(contextFor(Routes.prototype.closed))).rejects.toBe(refusal);
  });

  it('checks the scope a route requires of callers that have scopes, and only of those', async () => {
    const scoped = authenticatorOf(async () => ({
      owner: 'alice',
      scopes: new Set(['plants:read']),
    }));
    await expect(
      new BearerAuthGuard(new Reflector(), scoped.authenticator).canActivate(
        contextFor(Routes.prototype.writes),
      ),
    ).rejects.toBeInstanceOf(InsufficientScopeException);
    const opaque = authenticatorOf(async () => ({ owner: 'alice' }));
    expect(
      await new BearerAuthGuard(new Reflector(), opaque.authenticator).canActivate(
        contextFor(Routes.prototype.writes),
      ),
    ).toBe(true);
  });
});
