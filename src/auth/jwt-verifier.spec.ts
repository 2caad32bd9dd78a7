import { errors, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { Logger } from '@nestjs/common';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { AuthChallengeException } from './auth-challenge.exception.js';
import { IssuerKeys } from './issuer-keys.js';
import { JwtVerifier, looksLikeJwt, type JwtSettings } from './jwt-verifier.js';

const ISSUER = 'https://idp.example.com/realms/plants';

const SETTINGS: JwtSettings = {
  issuer: ISSUER,
  audience: 'plant-store',
  ownerClaim: 'sub',
  algorithms: ['ES256'],
  clockToleranceS: 30,
  requireScopes: true,
  jwksCooldownMs: 10_000,
  jwksRefreshMs: 600_000,
  isAllowedUrl: () => true,
};

describe('JwtVerifier', () => {
  let sign: (claims: JWTPayload, kid?: string) => Promise<string>;
  let resolved = 0;
  /** The key ids the stand-in issuer lists; one key signs them all. */
  const listed = new Set(['k1', 'k2']);
  let verifier: (settings?: Partial<JwtSettings>, now?: () => number) => JwtVerifier;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    sign = (claims, kid) =>
      new SignJWT({ iss: ISSUER, aud: 'plant-store', sub: 'alice', exp: 9_999_999_999, ...claims })
        .setProtectedHeader({ alg: 'ES256', kid })
        .sign(privateKey);
    // The issuer's key set stands in for IssuerKeys, which test/jwt.e2e-spec.ts drives for real.
    const keys = {
      resolve: async ({ kid }: { kid?: string }) => {
        resolved += 1;
        if (kid !== undefined && !listed.has(kid)) throw new errors.JWKSNoMatchingKey();
        return publicKey;
      },
      stillLists: (kid: string | undefined) => kid === undefined || listed.has(kid),
      currentGeneration: 1,
    } as unknown as IssuerKeys;
    verifier = (settings = {}, now) => new JwtVerifier({ ...SETTINGS, ...settings }, keys, now);
  });

  it('tells a JWT from an opaque token by its three parts', () => {
    expect(looksLikeJwt('a.b.c')).toBe(true);
    expect(looksLikeJwt('pst_abc')).toBe(false);
    expect(looksLikeJwt('a.b')).toBe(false);
  });

  it('namespaces the owner by issuer, so it cannot be an opaque-token owner', async () => {
    const { owner } = await verifier().verify(await sign({ sub: 'alice' }));
    expect(owner).toMatch(/^jwt:[A-Za-z0-9_-]{10}:alice$/);
    const other = verifier({ issuer: 'https://other.example.com' });
    const elsewhere = await other.verify(await sign({ iss: 'https://other.example.com' }));
    expect(elsewhere.owner).toMatch(/:alice$/);
    expect(elsewhere.owner).not.toBe(owner);
  });

  it('reads the owner from the configured claim, and refuses one that cannot be an owner', async () => {
    const byEmail = verifier({ ownerClaim: 'email' });
    expect((await byEmail.verify(await sign({ email: 'a@example.com' }))).owner).toMatch(
      /:a@example\.com$/,
    );
    for (const email of [undefined, 'x'.repeat(50), 'has space', { nested: 1 }]) {
      await expect(byEmail.verify(await sign({ email }))).rejects.toThrow(/email claim/);
    }
  });

  it('reads scopes from scope and scp', async () => {
    const { scopes } = await verifier().verify(
      await sign({ scope: 'openid plants:read', scp: ['plants:write'] }),
    );
    expect([...scopes!].sort()).toEqual(['openid', 'plants:read', 'plants:write']);
    const unscoped = await verifier({ requireScopes: false }).verify(await sign({ sub: 'u' }));
    expect(unscoped.scopes).toBeUndefined();
  });

  it('verifies a token once, then answers from its cache until it expires', async () => {
    const once = verifier();
    const token = await sign({ sub: 'cached' });
    const before = resolved;
    await once.verify(token);
    await once.verify(token);
    expect(resolved).toBe(before + 1);
  });

  it('answers a verified token from its cache for five minutes at most, then verifies it again', async () => {
    let clock = Date.now();
    const bounded = verifier({}, () => clock);
    const token = await sign({ sub: 'bounded' });
    const before = resolved;
    await bounded.verify(token);
    clock += 5 * 60_000 - 1;
    await bounded.verify(token);
    expect(resolved).toBe(before + 1);
    clock += 1;
    await bounded.verify(token);
    expect(resolved).toBe(before + 2);
  });

  it('refuses a cached token once the issuer no longer lists the key that signed it', async () => {
    const rotating = verifier();
    const token = await sign({ sub: 'dropped' }, 'k1');
    const kept = await sign({ sub: 'kept' }, 'k2');
    await rotating.verify(token);
    await rotating.verify(kept);
    const before = resolved;
    listed.delete('k1');
    await expect(rotating.verify(token)).rejects.toThrow(
      'the access token signature does not verify: no key of the issuer matches its key id',
    );
    await expect(rotating.verify(token)).rejects.toBeInstanceOf(AuthChallengeException);
    expect((await rotating.verify(kept)).owner).toMatch(/:kept$/);
    // Only the dropped key's token was verified again (twice): the other came from the cache.
    expect(resolved).toBe(before + 2);
    listed.add('k1');
  });

  it('answers a verified token again from its cache, without verifying its signature', async () => {
    // Counted, not timed: each verification asks the key set for the signing key once.
    const cachedVerifier = verifier();
    const tokens = await Promise.all(
      Array.from({ length: 200 }, (_, i) => sign({ sub: `cost-${i}` })),
    );
    const before = resolved;
    const owners = await Promise.all(tokens.map((token) => cachedVerifier.verify(token)));
    expect(resolved).toBe(before + tokens.length);
    for (let round = 0; round < 20; round++) {
      for (const [i, token] of tokens.entries()) {
        expect((await cachedVerifier.verify(token)).owner).toBe(owners[i].owner);
      }
    }
    expect(resolved).toBe(before + tokens.length);
  });

  it('refuses an iat in the future or not a number, and a sub that is not a string, naming the check', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expect(verifier().verify(await sign({ iat: now + 3600 }))).rejects.toThrow(
      'the access token is issued in the future',
    );
    expect((await verifier().verify(await sign({ iat: now + 10, sub: 'skew' }))).owner).toMatch(
      /:skew$/,
    );
    await expect(verifier().verify(await sign({ iat: 'yesterday' as never }))).rejects.toThrow(
      "the access token's iat claim is not a number",
    );
    await expect(verifier().verify(await sign({ sub: 42 as never }))).rejects.toThrow(
      "the access token's sub claim is not a string",
    );
  });

  it('says that a critical header parameter is not understood, not that the algorithm is wrong', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const token = await new SignJWT({
      iss: ISSUER,
      aud: 'plant-store',
      sub: 'a',
      exp: 9_999_999_999,
    })
      .setProtectedHeader({ alg: 'ES256', crit: ['x-unknown'], 'x-unknown': 1 })
      // Signed by a producer that understands it; jose checks crit before the signature.
      .sign(privateKey, { crit: { 'x-unknown': true } });
    await expect(verifier().verify(token)).rejects.toThrow(
      'the access token has a critical header parameter that is not understood',
    );
  });

  it('refuses a token without exp, and an over-long one, with a challenge', async () => {
    const noExpiry = verifier().verify(await sign({ exp: undefined }));
    await expect(noExpiry).rejects.toBeInstanceOf(AuthChallengeException);
    await expect(verifier().verify(await sign({ exp: undefined }))).rejects.toThrow(/expiry/);
    await expect(verifier().verify(`${'a'.repeat(9000)}.b.c`)).rejects.toThrow(/too long/);
  });

  it('warns when a periodic refresh fails, and stops refreshing on shutdown', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => {});
    try {
      const fetched = vi.fn(async () => new Response('down', { status: 502 }));
      const keys = new IssuerKeys({
        issuer: ISSUER,
        jwksUri: `${ISSUER}/jwks`,
        cooldownMs: 0,
        isAllowedUrl: () => true,
        fetch: fetched,
      });
      const refreshing = new JwtVerifier({ ...SETTINGS, jwksRefreshMs: 1000 }, keys);
      refreshing.onApplicationBootstrap();
      await vi.advanceTimersByTimeAsync(1000);
      expect(fetched).toHaveBeenCalledTimes(2);
      expect(warn).toHaveBeenLastCalledWith(
        expect.stringMatching(
          /could not be refreshed \(.*answered 502\); the last keys fetched stay in use/,
        ),
      );
      refreshing.onModuleDestroy();
      await vi.advanceTimersByTimeAsync(5000);
      expect(fetched).toHaveBeenCalledTimes(2);
    } finally {
      warn.mockRestore();
      vi.useRealTimers();
    }
  });
});
