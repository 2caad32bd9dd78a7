import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually.js';
import { databaseKinds } from './support/test-database.js';
import { type TestApp, useTestApp } from './support/test-app.js';
import { startTestIssuer, type TestIssuer } from './support/test-issuer.js';

const AUDIENCE = 'plant-store';
const COOLDOWN_MS = 300;
const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

/** An issuer started before the app (beforeAll order) and closed after it. */
function useIssuer(): { current: TestIssuer } {
  const holder = {} as { current: TestIssuer };
  beforeAll(async () => {
    holder.current = await startTestIssuer(AUDIENCE);
  });
  afterAll(() => holder.current?.close());
  return holder;
}

const jwtEnv = (issuer: { current: TestIssuer }, extra: Record<string, string> = {}) => ({
  get AUTH_JWT_ISSUER() {
    return issuer.current.url;
  },
  AUTH_JWT_AUDIENCE: AUDIENCE,
  AUTH_JWT_JWKS_COOLDOWN_MS: String(COOLDOWN_MS),
  ...extra,
});

/** Requests through Fastify's inject: 403 and 503 answers are not all in the OpenAPI document. */
function client(t: { current: TestApp }) {
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, token?: string, body?: unknown) =>
    t.current.app
      .getHttpAdapter()
      .getInstance()
      .inject({
        method,
        url,
        headers: token ? { authorization: `Bearer ${token}` } : {},
        ...(body === undefined ? {} : { payload: body as object }),
      });
  return {
    list: (token: string) => call('GET', '/plants', token),
    create: (token: string, id: number, name: string) =>
      call('POST', '/plants', token, { id, name }),
    remove: (token: string, id: number) => call('DELETE', `/plants/${id}`, token),
  };
}

type Answer = Awaited<ReturnType<ReturnType<typeof client>['list']>>;

/**
 * Lists with `token` until the answer is `status`: the cooldown of the last
 * key fetch is over, which nothing announces but the answer itself. Every
 * answer before it must be the one the cooldown gives, as `meanwhile` checks.
 */
function afterCooldown(
  api: ReturnType<typeof client>,
  token: string,
  status: number,
  meanwhile: (answer: Answer) => void,
): Promise<Answer> {
  return eventually(
    async () => {
      const answer = await api.list(token);
      if (answer.statusCode === status) return answer;
      meanwhile(answer);
      return undefined;
    },
    `no ${status} once the cooldown was over`,
    10_000,
    COOLDOWN_MS / 3,
  );
}

/** What a token answers within the cooldown of a fetch that failed: 503, try again later. */
const expectUnavailable = (answer: Answer) => expect(answer.statusCode).toBe(503);

function expectInvalidToken(answer: Answer, description: RegExp, token: string) {
  expect(answer.statusCode).toBe(401);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  const body = answer.json<{ error: number; message: string }>();
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(401);
  expect(body.message).toMatch(description);
  const challenge = String(answer.headers['www-authenticate']);
  expect(challenge).toMatch(/^Bearer realm="plants", error="invalid_token", error_description="/);
  expect(challenge).toMatch(description);
  // Neither the token nor any of its parts is sent back.
  for (const part of token.split('.').filter((p) => p.length > 8)) {
    expect(answer.body).not.toContain(part);
    expect(challenge).not.toContain(part);
  }
}

describe.each(databaseKinds())('OpenID Connect access tokens on %s', (kind) => {
  const issuer = useIssuer();
  const t = useTestApp(kind, jwtEnv(issuer));
  const api = client(t);

  it('accepts valid RS256 and ES256 access tokens, beside opaque tokens', async () => {
    const rs = await issuer.current.sign({ sub: 'rs-user' }, { alg: 'RS256' });
    const es = await issuer.current.sign({ sub: 'rs-user' }, { alg: 'ES256' });
    expect((await api.create(rs, 1, 'Fern')).statusCode).toBe(200);
    const listed = await api.list(es);
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual([{ name: 'Fern' }]);
    const { auth } = await t.current.newCaller();
    expect((await api.list(auth.slice('Bearer '.length))).json()).toEqual([]);
  });

  it.each([
    ['expired', { exp: now() - 120 }, /has expired/],
    ['not yet valid', { nbf: now() + 120 }, /not yet valid/],
    ['from another issuer', { iss: 'https://idp.example.com' }, /another issuer/],
    ['for another audience', { aud: 'someone-else' }, /another audience/],
  ])('refuses a token %s with a 401 that says so', async (_, claims, description) => {
    const token = await issuer.current.sign(claims);
    expectInvalidToken(await api.list(token), description, token);
  });

  it('allows a small clock skew on exp and nbf', async () => {
    const token = await issuer.current.sign({ exp: now() - 5, nbf: now() + 5 });
    expect((await api.list(token)).statusCode).toBe(200);
  });

  it('refuses alg none, an HS256 token keyed with the public key, and a tampered payload', async () => {
    const none = `${b64({ alg: 'none' })}.${b64({ iss: issuer.current.url, aud: AUDIENCE, sub: 'x', exp: now() + 60 })}.`;
    expectInvalidToken(await api.list(none), /algorithm that is not allowed/, none);

    const header = b64({ alg: 'HS256', typ: 'JWT' });
    const payload = b64({ iss: issuer.current.url, aud: AUDIENCE, sub: 'x', exp: now() + 60 });
    const mac = createHmac('sha256', issuer.current.publicPem('RS256'))
      .update(`${header}.${payload}`)
      .digest('base64url');
    const confused = `${header}.${payload}.${mac}`;
    expectInvalidToken(await api.list(confused), /algorithm that is not allowed/, confused);

    const [h, , s] = (await issuer.current.sign({ sub: 'victim' })).split('.');
    const tampered = `${h}.${b64({ iss: issuer.current.url, aud: AUDIENCE, sub: 'attacker', exp: now() + 60 })}.${s}`;
    expectInvalidToken(await api.list(tampered), /signature does not verify/, tampered);
  });

  it('keeps JWT subjects and opaque-token owners of the same name apart', async () => {
    const opaque = (await t.current.tokenFor('carol')).valueOf();
    const jwt = await issuer.current.sign({ sub: 'carol' });
    expect((await api.create(opaque, 7, 'Opaque carol')).statusCode).toBe(200);
    expect((await api.create(jwt, 7, 'JWT carol')).statusCode).toBe(200);
    expect((await api.list(opaque)).json()).toEqual([{ name: 'Opaque carol' }]);
    expect((await api.list(jwt)).json()).toEqual([{ name: 'JWT carol' }]);
    const dave = await issuer.current.sign({ sub: 'dave' });
    expect((await api.list(dave)).json()).toEqual([]);
    expect((await api.remove(dave, 7)).statusCode).toBe(404);
  });

  it('answers hostile JWT-shaped credentials with a 401 in the Error shape', async () => {
    const bomb = b64(`{"alg":"RS256","x":${'['.repeat(2000)}${']'.repeat(2000)}}`);
    const hostile = [
      `${b64({ alg: 'RS256', pad: 'x'.repeat(7000) })}.${b64({})}.c2ln`,
      'e30.!!!not-base64url!!!.c2ln',
      `${bomb}.${b64({ sub: 'x' })}.c2ln`,
      `${b64('not json')}.${b64('[]')}.c2ln`,
      `${'a'.repeat(9000)}.b.c`,
    ];
    for (const token of hostile) {
      expectInvalidToken(await api.list(token), /too long|malformed|not allowed|signature/, token);
    }
  });

  it('fetches the keys again once for an unknown key id, and no more than once per cooldown', async () => {
    await issuer.current.rotate();
    const before = issuer.current.jwksFetches();
    const rotated = await issuer.current.sign({ sub: 'rotated' }, { alg: 'ES256' });
    // Within the cooldown of an earlier fetch the new key id is the token's fault; then fetched.
    await afterCooldown(api, rotated, 200, (answer) => {
      expectInvalidToken(answer, /no key of the issuer matches/, rotated);
      expect(issuer.current.jwksFetches()).toBe(before);
    });
    expect(issuer.current.jwksFetches()).toBe(before + 1);
    // Made-up key ids within the cooldown: 401s, and the issuer is not asked again.
    for (let i = 0; i < 5; i++) {
      const forged = await issuer.current.sign({}, { kid: `made-up-${i}` });
      expectInvalidToken(await api.list(forged), /no key of the issuer matches/, forged);
    }
    expect(issuer.current.jwksFetches()).toBe(before + 1);
  });

  it('answers 503 with Retry-After while the issuer is down and no cached key fits, then recovers', async () => {
    const verifiedBefore = await issuer.current.sign({ sub: 'before-outage' });
    expect((await api.list(verifiedBefore)).statusCode).toBe(200);
    await issuer.current.rotate();
    issuer.current.setDown(true);
    // A token verified before is remembered until it expires: no key is needed for it.
    expect((await api.list(verifiedBefore)).statusCode).toBe(200);
    const token = await issuer.current.sign({ sub: 'during-outage' });
    // Within the cooldown of the last fetch (which worked) the new key id is the token's fault.
    const down = await afterCooldown(api, token, 503, (answer) =>
      expectInvalidToken(answer, /no key of the issuer matches/, token),
    );
    expect(Number(down.headers['retry-after'])).toBeGreaterThan(0);
    expect(Object.keys(down.json()).sort()).toEqual(['error', 'message']);
    // Opaque tokens are unaffected.
    const opaque = await t.current.tokenFor('outage-opaque');
    expect((await api.list(opaque)).statusCode).toBe(200);
    issuer.current.setDown(false);
    await afterCooldown(api, token, 200, expectUnavailable);
  });
});

describe.each(databaseKinds())('keys refreshed periodically on %s', (kind) => {
  const issuer = useIssuer();
  const t = useTestApp(kind, jwtEnv(issuer, { AUTH_JWT_JWKS_REFRESH_MS: '1000' }));
  const api = client(t);

  it('refuses a token signed with a key the issuer dropped, a cached one included', async () => {
    const old = await issuer.current.sign({ sub: 'rotated-out' }, { alg: 'ES256' });
    expect((await api.list(old)).statusCode).toBe(200);
    expect((await api.list(old)).statusCode).toBe(200);
    await issuer.current.rotate();
    const before = issuer.current.jwksFetches();
    // No request asks for a fetch (the old key id is cached); the service's own refresh must
    // come. Polled rather than timed: without it the cached token is answered for 5 minutes.
    const answer = await eventually(
      async () => {
        const listed = await api.list(old);
        return listed.statusCode !== 200 && listed;
      },
      'the dropped key still verifies',
      20_000,
      100,
    );
    expect(issuer.current.jwksFetches()).toBeGreaterThan(before);
    expectInvalidToken(answer, /signature does not verify/, old);
    const current = await issuer.current.sign({ sub: 'rotated-in' }, { alg: 'ES256' });
    expect((await api.list(current)).statusCode).toBe(200);
  });
});

describe.each(databaseKinds())('an issuer down at start-up on %s', (kind) => {
  const issuer = useIssuer();
  beforeAll(() => issuer.current.setDown(true));
  const t = useTestApp(kind, jwtEnv(issuer));
  const api = client(t);

  it('starts, answers JWT callers 503, and recovers when the issuer is back', async () => {
    const token = await issuer.current.sign();
    const down = await api.list(token);
    expect(down.statusCode).toBe(503);
    expect(Number(down.headers['retry-after'])).toBeGreaterThan(0);
    issuer.current.setDown(false);
    await afterCooldown(api, token, 200, expectUnavailable);
  });
});

describe.each(databaseKinds())('scopes required on %s', (kind) => {
  const issuer = useIssuer();
  const t = useTestApp(kind, jwtEnv(issuer, { AUTH_JWT_REQUIRE_SCOPES: 'true' }));
  const api = client(t);

  it('lets plants:read list and plants:write create and delete, from scope or scp', async () => {
    const reader = await issuer.current.sign({ sub: 'scoped', scope: 'openid plants:read' });
    const writer = await issuer.current.sign({ sub: 'scoped', scp: ['plants:write'] });
    expect((await api.create(writer, 1, 'Ivy')).statusCode).toBe(200);
    expect((await api.list(reader)).json()).toEqual([{ name: 'Ivy' }]);

    const refused = await api.create(reader, 2, 'Moss');
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer realm="plants", error="insufficient_scope", scope="plants:write"',
    );
    expect(refused.json()).toEqual({ error: 403, message: expect.stringMatching(/plants:write/) });
    expect((await api.remove(reader, 1)).statusCode).toBe(403);
    expect((await api.list(writer)).headers['www-authenticate']).toMatch(/scope="plants:read"/);
    expect((await api.remove(writer, 1)).statusCode).toBe(204);
  });

  it('lets only webhooks:manage subscribe, list and delete webhook subscriptions', async () => {
    const call = (method: 'GET' | 'POST', token: string, body?: object) =>
      t.current.app
        .getHttpAdapter()
        .getInstance()
        .inject({
          method,
          url: '/webhooks',
          headers: { authorization: `Bearer ${token}` },
          ...(body ? { payload: body } : {}),
        });
    // A subscription is only stored here: no plant of this owner is created, so nothing is sent.
    const subscription = { url: 'https://receiver.example/hooks/plants' };
    const writer = await issuer.current.sign({ sub: 'hooks', scope: 'plants:read plants:write' });
    const refused = await call('POST', writer, subscription);
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer realm="plants", error="insufficient_scope", scope="webhooks:manage"',
    );
    expect(refused.json()).toEqual({
      error: 403,
      message: expect.stringMatching(/webhooks:manage/),
    });
    expect((await call('GET', writer)).statusCode).toBe(403);

    const manager = await issuer.current.sign({ sub: 'hooks', scope: 'webhooks:manage' });
    expect((await call('POST', manager, subscription)).statusCode).toBe(201);
    const listed = await call('GET', manager);
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual([expect.objectContaining(subscription)]);
  });

  it('leaves opaque tokens unrestricted', async () => {
    const opaque = await t.current.tokenFor('opaque-scoped');
    expect((await api.create(opaque, 1, 'Palm')).statusCode).toBe(200);
    expect((await api.list(opaque)).statusCode).toBe(200);
  });
});
