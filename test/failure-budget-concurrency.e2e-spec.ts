import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { TokensService } from '../src/auth/tokens.service.js';
import { databaseKinds } from './support/test-database.js';
import { type TestApp, useTestApp } from './support/test-app.js';

const LIMIT = 20;
const CONCURRENT = 300;
/** Right tokens sent together: past the budget's one free place, each waits for a lookup. */
const VALID = 100;

/** Each test's own client address: no other test (or suite, through Redis) shares its counters. */
const randomAddress = () => `10.${[1, 2, 3].map(() => randomBytes(1)[0]).join('.')}`;

/** Requests with `authorization` from `address`, all in flight at once (Fastify's inject). */
function concurrently(t: TestApp, address: string, authorizations: string[]) {
  const fastify = t.app.getHttpAdapter().getInstance();
  return Promise.all(
    authorizations.map((authorization) =>
      fastify.inject({
        method: 'GET',
        url: '/plants',
        remoteAddress: address,
        headers: { authorization },
      }),
    ),
  );
}

/** Runs `work` while counting the token lookups that reach the database. */
async function countingLookups<T>(t: TestApp, work: () => Promise<T>) {
  const tokens = t.app.get(TokensService);
  const callerOf = tokens.callerOf;
  let lookups = 0;
  tokens.callerOf = (...lookup) => {
    lookups += 1;
    return callerOf.apply(tokens, lookup);
  };
  try {
    return { result: await work(), lookups };
  } finally {
    tokens.callerOf = callerOf;
  }
}

const redisUrl = inject('redisUrl');
const STORES: [string, Record<string, string>][] = [
  ['memory', {}],
  ...(redisUrl ? [['Redis', { REDIS_URL: redisUrl }] as [string, Record<string, string>]] : []),
];

describe.each(databaseKinds())('the failure budget under concurrency on %s', (kind) => {
  describe.each(STORES)('counted in %s', (_, store) => {
    const t = useTestApp(kind, {
      RATE_LIMIT_ENABLED: 'true',
      AUTH_FAILURE_LIMIT: String(LIMIT),
      // The budget is under test, not the pace of refusals: none is held back.
      AUTH_REFUSAL_RATE: '1000000',
      // Nor the bound on one owner's requests in flight, which the valid tokens sent together pass.
      FAIR_SHARE_MAX_IN_FLIGHT: String(VALID),
      ...store,
    });

    it(`looks up at most ${LIMIT} of ${CONCURRENT} concurrent wrong tokens from one address, and refuses the rest with 429`, async () => {
      const wrong = Array.from({ length: CONCURRENT }, (_, i) => `Bearer pst_wrong${i}`);
      const { result: answers, lookups } = await countingLookups(t.current, () =>
        concurrently(t.current, randomAddress(), wrong),
      );
      const invalid = answers.filter(
        (answer) =>
          answer.statusCode === 401 &&
          String(answer.headers['www-authenticate']).includes('error="invalid_token"'),
      );
      const refused = answers.filter((answer) => answer.statusCode === 429);
      expect(invalid.length + refused.length).toBe(CONCURRENT);
      expect(lookups).toBeLessThanOrEqual(LIMIT);
      expect(invalid.length).toBe(lookups);
      expect(refused.length).toBeGreaterThanOrEqual(CONCURRENT - LIMIT);
    });

    it(`answers ${VALID} concurrent valid tokens from an address one failure short of the budget, none refused`, async () => {
      const address = randomAddress();
      const { auth } = await t.current.newCaller();
      const failures = await concurrently(
        t.current,
        address,
        Array.from({ length: LIMIT - 1 }, (_, i) => `Bearer pst_miss${i}`),
      );
      expect(failures.map((answer) => answer.statusCode)).toEqual(Array(LIMIT - 1).fill(401));
      const answers = await concurrently(t.current, address, Array(VALID).fill(auth));
      expect(answers.map((answer) => answer.statusCode)).toEqual(Array(VALID).fill(200));
      // The budget still holds: one more wrong token, then even the right one is refused.
      const [last] = await concurrently(t.current, address, ['Bearer pst_last']);
      expect(last.statusCode).toBe(401);
      const [after] = await concurrently(t.current, address, [auth]);
      expect(after.statusCode).toBe(429);
    });
  });
});
