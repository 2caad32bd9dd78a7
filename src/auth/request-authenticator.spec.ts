import { BadRequestException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import passport from 'passport';
import { Strategy } from 'passport-http-bearer';
import { beforeAll, describe, expect, it } from 'vitest';
import { AuthChallengeException } from './auth-challenge.exception.js';
import type { AuthenticatedCaller } from './caller-owner.decorator.js';
import { MemoryAuthFailureLimiter } from './auth-failure.limiter.js';
import { REALM } from './auth-challenge.exception.js';
import type { RefusalPacer } from './refusal-pacer.js';
import { callerFromVerdict, RequestAuthenticator } from './request-authenticator.js';

/** A request as Fastify hands it over: parsed headers and Node's raw ones. */
const requestWith = (...rawHeaders: string[]): FastifyRequest => {
  const headers: Record<string, string> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    headers[rawHeaders[i].toLowerCase()] ??= rawHeaders[i + 1];
  }
  return { ip: '10.0.0.1', headers, raw: { rawHeaders } } as unknown as FastifyRequest;
};
const reply = {} as FastifyReply;

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

describe('callerFromVerdict', () => {
  it('returns the authenticated caller', () => {
    expect(callerFromVerdict(null, { owner: 'alice' }, undefined)).toEqual({ owner: 'alice' });
  });

  it('challenges a request without a token with the plain Bearer realm', () => {
    const { message, header } = challengeOf(() =>
      callerFromVerdict(null, false, 'Bearer realm="plants"'),
    );
    expect(header).toBe('Bearer realm="plants"');
    expect(message).toMatch(/bearer token is required/);
  });

  it('adds error="invalid_token" when the token is unknown or revoked', () => {
    const { header } = challengeOf(() =>
      callerFromVerdict(null, false, 'Bearer realm="plants", error="invalid_token"'),
    );
    expect(header).toBe('Bearer realm="plants", error="invalid_token"');
  });

  it('explains a malformed Authorization header (passport reports it as a 400)', () => {
    const { message, header } = challengeOf(() => callerFromVerdict(null, false, undefined, 400));
    expect(message).toMatch(/must be "Bearer <token>"/);
    expect(header).toBe('Bearer realm="plants"');
  });

  it('passes on errors of the token lookup (e.g. the database is down)', () => {
    const down = new Error('ECONNREFUSED');
    expect(() => callerFromVerdict(down, false, undefined)).toThrow(down);
  });
});

describe('RequestAuthenticator', () => {
  let lookups = 0;
  beforeAll(() => {
    // passport's real bearer strategy, with a token table standing in for the database.
    passport.use(
      'bearer',
      new Strategy(
        { realm: REALM },
        (
          token: string,
          done: (error: Error | null, caller: AuthenticatedCaller | false) => void,
        ) => {
          lookups += 1;
          // A token table that cannot be reached, as a database that is down.
          if (token === 'down-token') return done(new Error('ECONNREFUSED'), false);
          done(null, token === 'good-token' ? { owner: 'alice' } : false);
        },
      ),
    );
  });

  it('authenticates once per request, however often it is asked', async () => {
    const authenticator = new RequestAuthenticator(null, null);
    const request = requestWith('Authorization', 'Bearer good-token');
    const before = lookups;
    expect(await authenticator.authenticate(request, reply)).toEqual({ owner: 'alice' });
    expect(await authenticator.authenticate(request, reply)).toEqual({ owner: 'alice' });
    expect(lookups - before).toBe(1);
  });

  it('refuses several Authorization headers (400) without looking a token up', async () => {
    const authenticator = new RequestAuthenticator(null, null);
    const before = lookups;
    const request = requestWith(
      'Authorization',
      'Bearer good-token',
      'authorization',
      'Bearer other-token',
    );
    await expect(authenticator.authenticate(request, reply)).rejects.toBeInstanceOf(
      BadRequestException,
    );
    expect(lookups).toBe(before);
  });

  it('counts only credentials that were presented and wrong, a malformed header included', async () => {
    const limiter = new MemoryAuthFailureLimiter(2, 60_000);
    const authenticator = new RequestAuthenticator(limiter, null);
    for (let i = 0; i < 5; i++) {
      await expect(authenticator.authenticate(requestWith(), reply)).rejects.toBeInstanceOf(
        AuthChallengeException,
      );
    }
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);

    await expect(
      authenticator.authenticate(requestWith('Authorization', 'Basic YTpi'), reply),
    ).rejects.toBeInstanceOf(AuthChallengeException);
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
    await expect(
      authenticator.authenticate(requestWith('Authorization', 'Bearer wrong-token'), reply),
    ).rejects.toBeInstanceOf(AuthChallengeException);
    expect(limiter.retryAfter('10.0.0.1')).toBeGreaterThan(0);
    // Locked out: even the right token gets the 429 now.
    await expect(
      authenticator.authenticate(requestWith('Authorization', 'Bearer good-token'), reply),
    ).rejects.toMatchObject({ status: 429 });
  });

  it('looks up no more wrong credentials sent together than the budget allows, and refuses the rest with 429', async () => {
    const authenticator = new RequestAuthenticator(new MemoryAuthFailureLimiter(2, 60_000), null);
    const before = lookups;
    const verdicts = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        authenticator.authenticate(requestWith('Authorization', `Bearer wrong-${i}`), reply),
      ),
    );
    expect(lookups - before).toBe(2);
    const statuses = verdicts.map((verdict) =>
      verdict.status === 'rejected' ? (verdict.reason as { status: number }).status : 200,
    );
    expect(statuses.filter((status) => status === 401)).toHaveLength(2);
    expect(statuses.filter((status) => status === 429)).toHaveLength(8);
  });

  it('frees the place of a right credential, a 400 and a failed lookup: none counts as a failure', async () => {
    const limiter = new MemoryAuthFailureLimiter(1, 60_000);
    const authenticator = new RequestAuthenticator(limiter, null);
    const good = Array.from({ length: 5 }, () =>
      authenticator.authenticate(requestWith('Authorization', 'Bearer good-token'), reply),
    );
    expect(await Promise.all(good)).toEqual(Array(5).fill({ owner: 'alice' }));
    const twoHeaders = requestWith('Authorization', 'Bearer a', 'Authorization', 'Bearer b');
    await expect(authenticator.authenticate(twoHeaders, reply)).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      authenticator.authenticate(requestWith('Authorization', 'Bearer down-token'), reply),
    ).rejects.toThrow('ECONNREFUSED');
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
    await expect(
      authenticator.authenticate(requestWith('Authorization', 'Bearer good-token'), reply),
    ).resolves.toEqual({ owner: 'alice' });
  });

  it('paces every refusal of its address (401, 429, 400), never an accepted caller nor a failure of its own', async () => {
    const paced: string[] = [];
    const pacer = { pace: (client: string) => void paced.push(client) } as unknown as RefusalPacer;
    const authenticator = new RequestAuthenticator(new MemoryAuthFailureLimiter(1, 60_000), pacer);
    await authenticator.authenticate(requestWith('Authorization', 'Bearer good-token'), reply);
    await expect(
      authenticator.authenticate(requestWith('Authorization', 'Bearer down-token'), reply),
    ).rejects.toThrow('ECONNREFUSED');
    expect(paced).toEqual([]);
    await expect(authenticator.authenticate(requestWith(), reply)).rejects.toMatchObject({
      status: 401,
    });
    const twoHeaders = requestWith('Authorization', 'Bearer a', 'Authorization', 'Bearer b');
    await expect(authenticator.authenticate(twoHeaders, reply)).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      authenticator.authenticate(requestWith('Authorization', 'Bearer wrong-token'), reply),
    ).rejects.toMatchObject({ status: 401 });
    await expect(
      authenticator.authenticate(requestWith('Authorization', 'Bearer good-token'), reply),
    ).rejects.toMatchObject({ status: 429 });
    expect(paced).toEqual(['10.0.0.1', '10.0.0.1', '10.0.0.1', '10.0.0.1']);
  });
});
