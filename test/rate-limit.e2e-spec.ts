import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { startApp, type TestApp, useTestApp } from './support/test-app.js';

const LIMITS = { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_MAX: '3', AUTH_FAILURE_LIMIT: '3' };

/** A request from a chosen client address, through Fastify's inject (supertest always comes from 127.0.0.1). */
function from(t: TestApp, remoteAddress: string, authorization?: string) {
  const fastify = t.app.getHttpAdapter().getInstance();
  return fastify.inject({
    method: 'GET',
    url: '/plants',
    remoteAddress,
    headers: authorization ? { authorization } : {},
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

describe('rate limits (in memory)', () => {
  const t = useTestApp('sqlite', LIMITS);

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

describe.skipIf(!inject('redisUrl'))('rate limits shared through Redis', () => {
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
