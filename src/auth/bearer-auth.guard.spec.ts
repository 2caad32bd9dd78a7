import { type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { describe, expect, it } from 'vitest';
import { AuthChallengeException } from './auth-challenge.exception.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { Public } from '../http/public.decorator.js';

class Routes {
  @Public()
  open(): void {}

  closed(): void {}
}

const contextFor = (handler: () => void): ExecutionContext =>
  ({ getHandler: () => handler, getClass: () => Routes }) as unknown as ExecutionContext;

const challengeOf = (run: () => unknown): { message: string; header: string } => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AuthChallengeException);
    const challenge = error as AuthChallengeException;
    return { message: challenge.message, header: challenge.responseHeaders()['WWW-Authenticate'] };
  }
  throw new Error('expected a challenge');
};

describe('BearerAuthGuard', () => {
  const guard = new BearerAuthGuard(new Reflector(), null);
  const context = contextFor(Routes.prototype.closed);

  it('lets @Public() routes through without asking passport', async () => {
    expect(await guard.canActivate(contextFor(Routes.prototype.open))).toBe(true);
  });

  it('returns the authenticated caller', () => {
    expect(guard.handleRequest(null, { owner: 'alice' }, undefined, context)).toEqual({
      owner: 'alice',
    });
  });

  it('challenges a request without a token with the plain Bearer realm', () => {
    const { message, header } = challengeOf(() =>
      guard.handleRequest(null, false, 'Bearer realm="plants"', context),
    );
    expect(header).toBe('Bearer realm="plants"');
    expect(message).toMatch(/bearer token is required/);
  });

  it('adds error="invalid_token" when the token is unknown or revoked', () => {
    const { header } = challengeOf(() =>
      guard.handleRequest(null, false, 'Bearer realm="plants", error="invalid_token"', context),
    );
    expect(header).toBe('Bearer realm="plants", error="invalid_token"');
  });

  it('explains a malformed Authorization header (passport reports it as a 400)', () => {
    const { message, header } = challengeOf(() =>
      guard.handleRequest(null, false, undefined, context, 400),
    );
    expect(message).toMatch(/must be "Bearer <token>"/);
    expect(header).toBe('Bearer realm="plants"');
  });

  it('passes on errors of the token lookup (e.g. the database is down)', () => {
    const down = new Error('ECONNREFUSED');
    expect(() => guard.handleRequest(down, false, undefined, context)).toThrow(down);
  });
});
