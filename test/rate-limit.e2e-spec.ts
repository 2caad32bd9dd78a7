import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ThrottlerGuard } from '@nestjs/throttler';
import { REDIS } from '../src/redis/redis.module.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { startApp, type TestApp, useTestApp } from './support/test-app.js';
import { freePort } from '../bench/support/free-port.js';
import { eventually } from './support/eventually.js';
import { TcpProxy } from './support/tcp-proxy.js';

const LIMITS = { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_MAX: '3', AUTH_FAILURE_LIMIT: '3' };

/**
 * A request from a chosen client address, through Fastify's inject (supertest
 * always comes from 127.0.0.1), optionally through a proxy that says who the
 * client was in X-Forwarded-For.
 */
function from(t: TestApp, remoteAddress: string, authorization?: string, forwardedFor?: string) {
  const fastify = t.app.getHttpAdapter().getInstance();
  return fastify.inject({
    method: 'GET',
    url: '/plants',
    remoteAddress,
    headers: {
      ...(authorization ? { authorization } : {}),
      ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
    },
  });
}

const randomAddress = () => `10.${[1, 2, 3].map(() => randomBytes(1)[0]).join('.')}`;

function expect429(response: {
  statusCode: number;
  headers: Record<string, unknown>;
  json(): unknown;
}) {
  expect(response.statusCode).toBe(429);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  const body = response.json() as { error: number; message: string };
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(429);
}

describe.each(databaseKinds())('rate limits (in memory) on %s', (kind) => {
  const t = useTestApp(kind, LIMITS);

  it('gives each token owner its own budget, and answers 429 with Retry-After past it', async () => {
    const address = randomAddress();
    const alice = (await t.current.newCaller()).auth;
    const bob = (await t.current.newCaller()).auth;
    for (let i = 0; i < 3; i++) {
      const response = await from(t.current, address, alice);
      expect(response.statusCode).toBe(200);
      // The budget, what is left of it, and the seconds until the window ends.
      expect(response.headers['x-ratelimit-limit']).toBe('3');
      expect(response.headers['x-ratelimit-remaining']).toBe(String(2 - i));
      expect(Number(response.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    }
    expect429(await from(t.current, address, alice));
    // Same client address, another owner: a budget of its own.
    expect((await from(t.current, address, bob)).statusCode).toBe(200);
  });

  it('refuses a client after repeated failed authentications, even with a valid token, and no other client', async () => {
    const attacker = randomAddress();
    const { auth } = await t.current.newCaller();
    for (let i = 0; i < 3; i++) {
      expect((await from(t.current, attacker, `Bearer pst_guess${i}`)).statusCode).toBe(401);
    }
    expect429(await from(t.current, attacker, `Bearer pst_guess`));
    expect429(await from(t.current, attacker, auth));
    expect((await from(t.current, randomAddress(), auth)).statusCode).toBe(200);
  });

  it('counts only credentials presented and wrong: requests without any lock nobody out', async () => {
    const shared = randomAddress();
    for (let i = 0; i < 10; i++) {
      expect((await from(t.current, shared)).statusCode).toBe(401);
    }
    const { auth } = await t.current.newCaller();
    expect((await from(t.current, shared, auth)).statusCode).toBe(200);
    // A malformed header is a credential presented, and wrong.
    for (let i = 0; i < 3; i++) {
      expect((await from(t.current, shared, 'Basic YTpi')).statusCode).toBe(401);
    }
    expect429(await from(t.current, shared, auth));
  });

  it('ignores X-Forwarded-For without TRUST_PROXY: every client of a proxy shares its budget', async () => {
    const proxy = randomAddress();
    for (let i = 0; i < 3; i++) {
      const response = await from(t.current, proxy, `Bearer pst_guess${i}`, randomAddress());
      expect(response.statusCode).toBe(401);
    }
    expect429(await from(t.current, proxy, 'Bearer pst_guess', randomAddress()));
  });

  it('never limits health probes', async () => {
    const fastify = t.current.app.getHttpAdapter().getInstance();
    for (let i = 0; i < 10; i++) {
      const response = await fastify.inject({
        method: 'GET',
        url: '/health/live',
        remoteAddress: '10.9.9.9',
      });
      expect(response.statusCode).toBe(200);
    }
  });
});

describe.each(databaseKinds())('rate limits behind a trusted proxy on %s', (kind) => {
  const t = useTestApp(kind, { ...LIMITS, TRUST_PROXY: '127.0.0.1' });

  it('gives each forwarded client its own failure budget and quota', async () => {
    const [guesser, other] = [randomAddress(), randomAddress()];
    for (let i = 0; i < 3; i++) {
      expect((await from(t.current, '127.0.0.1', `Bearer pst_g${i}`, guesser)).statusCode).toBe(
        401,
      );
    }
    expect429(await from(t.current, '127.0.0.1', 'Bearer pst_g', guesser));
    // Another client of the same proxy is not locked out: its failures are its own.
    expect((await from(t.current, '127.0.0.1', 'Bearer pst_g', other)).statusCode).toBe(401);
    const { auth } = await t.current.newCaller();
    expect((await from(t.current, '127.0.0.1', auth, other)).statusCode).toBe(200);
    // An address that is not the trusted proxy cannot claim to forward for someone else.
    const untrusted = randomAddress();
    for (let i = 0; i < 3; i++) {
      await from(t.current, untrusted, `Bearer pst_u${i}`, randomAddress());
    }
    expect429(await from(t.current, untrusted, auth, randomAddress()));
  });
});

describe.each(databaseKinds())('rate limiting off on %s', (kind) => {
  const t = useTestApp(kind, {
    RATE_LIMIT_ENABLED: 'false',
    AUTH_FAILURE_LIMIT: '1',
    REDIS_URL: 'redis://127.0.0.1:6379',
  });

  it('loads neither the quota nor the failure budget, and opens no Redis connection', async () => {
    expect(() => t.current.app.get(REDIS, { strict: false })).toThrow();
    expect(() => t.current.app.get(ThrottlerGuard, { strict: false })).toThrow();
    const address = randomAddress();
    for (let i = 0; i < 3; i++) {
      expect((await from(t.current, address, `Bearer pst_off${i}`)).statusCode).toBe(401);
    }
    const response = await from(t.current, address, (await t.current.newCaller()).auth);
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe.skipIf(!inject('redisUrl'))('rate limits shared through Redis (needs Redis)', () => {
  const apps: TestApp[] = [];
  let database: TestDatabase;
  afterAll(async () => {
    for (const app of apps) await app.close();
    await database?.drop();
  });

  it('makes two instances share one budget per owner and per failing client', async () => {
    database = await createTestDatabase('sqlite');
    const env = { ...LIMITS, REDIS_URL: inject('redisUrl')! };
    apps.push(await startApp(database, env), await startApp(database, env));
    const [a, b] = apps;
    const { auth } = await a.newCaller();
    const address = randomAddress();
    expect((await from(a, address, auth)).statusCode).toBe(200);
    expect((await from(b, address, auth)).statusCode).toBe(200);
    expect((await from(a, address, auth)).statusCode).toBe(200);
    expect429(await from(b, address, auth));
    expect429(await from(a, address, auth));

    const attacker = randomAddress();
    expect((await from(a, attacker, 'Bearer pst_x1')).statusCode).toBe(401);
    expect((await from(b, attacker, 'Bearer pst_x2')).statusCode).toBe(401);
    expect((await from(a, attacker, 'Bearer pst_x3')).statusCode).toBe(401);
    expect429(await from(b, attacker, 'Bearer pst_x4'));
  });
});

/** The owner's quota and the address's failure budget, both past their limit of 3. */
async function expectBothLimits(t: TestApp): Promise<void> {
  const address = randomAddress();
  const { auth } = await t.newCaller();
  for (let i = 0; i < 3; i++) expect((await from(t, address, auth)).statusCode).toBe(200);
  expect429(await from(t, address, auth));
  const attacker = randomAddress();
  for (let i = 0; i < 3; i++) {
    expect((await from(t, attacker, `Bearer pst_guess${i}`)).statusCode).toBe(401);
  }
  expect429(await from(t, attacker, 'Bearer pst_guess'));
}

describe('rate limits while Redis cannot be reached', () => {
  const apps: TestApp[] = [];
  let database: TestDatabase;
  afterAll(async () => {
    for (const app of apps) await app.close();
    await database?.drop();
  });

  it('start, answer and count in each instance alone (fail open), never a 500', async () => {
    database = await createTestDatabase('sqlite');
    // A port where nothing listens.
    const env = { ...LIMITS, REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
    apps.push(await startApp(database, env));
    await expectBothLimits(apps[0]);
  });
});

describe.skipIf(!inject('redisUrl'))(
  'rate limits when Redis goes away and comes back (needs Redis)',
  () => {
    const apps: TestApp[] = [];
    let database: TestDatabase;
    let proxy: TcpProxy;
    afterAll(async () => {
      for (const app of apps) await app.close();
      await proxy?.stop();
      await database?.drop();
    });

    it('count locally while it is away and share the counts again once it is back', async () => {
      database = await createTestDatabase('sqlite');
      const redis = new URL(inject('redisUrl')!);
      proxy = await new TcpProxy(redis.hostname, Number(redis.port || 6379)).start();
      redis.host = `127.0.0.1:${proxy.port}`;
      const env = { ...LIMITS, REDIS_URL: redis.toString() };
      apps.push(await startApp(database, env), await startApp(database, env));
      const [a, b] = apps;

      proxy.cut();
      await expectBothLimits(a);
      await expectBothLimits(b);

      proxy.restore();
      // Shared again once both clients have reconnected: three requests across both
      // instances use up the owner's one budget. Each try is a new owner and
      // address: a try made while one instance still counted alone spends its
      // owner's shared budget for the whole window.
      await eventually(async () => {
        const { auth } = await a.newCaller();
        const address = randomAddress();
        const statuses = [];
        for (const t of [a, b, a, b]) statuses.push((await from(t, address, auth)).statusCode);
        return statuses.join() === '200,200,200,429';
      }, 'the two instances do not share the quota again after Redis came back');
    });
  },
);
