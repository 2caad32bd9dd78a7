import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { TokensService } from '../src/auth/tokens.service.js';
import { snapshotDatabase } from './support/database-snapshot.js';
import { describeRequest, problemsOf } from './support/hostile-answer.js';
import { type FuzzCredentials, hostileRequest } from './support/hostile-requests.js';
import { plantsClient } from './support/plants-client.js';
import { databaseKinds } from './support/test-database.js';
import { useTestApp } from './support/test-app.js';

/** Requests per database and CI run; FUZZ_RUNS raises it for a longer local hunt. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

const VICTIM_PLANTS = [
  { id: -(2n ** 63n), name: 'Oldest oak', tag: 'tree' },
  { id: -1n, name: "Robert'); DROP TABLE plants;--" },
  { id: 0n, name: '薔薇', tag: '🌹' },
  { id: 1n, name: 'Fern' },
  { id: 2n ** 53n + 1n, name: 'Precise palm', tag: '' },
  { id: 2n ** 63n - 1n, name: 'Youngest yew', tag: 'tree' },
];

describe.each(databaseKinds())('hostile input on %s', (kind) => {
  // A small body limit makes "too large" cheap to send.
  const t = useTestApp(kind, { BODY_LIMIT_BYTES: '16384' });

  it(`answers ${RUNS} generated malformed requests without a 5xx, each error in the contract's shape, and changes nothing`, async () => {
    const app = t.current;
    const tokens = app.app.get(TokensService);
    const victimToken = await app.tokenFor('victim');
    const victim = plantsClient(app, `Bearer ${victimToken}`);
    for (const plant of VICTIM_PLANTS) expect((await victim.create(plant)).status).toBe(200);
    // Subscribed after the plants were created: no event, so no delivery leaves the machine.
    const subscription = await app
      .http()
      .post('/webhooks')
      .set('Authorization', `Bearer ${victimToken}`)
      .send({ url: 'https://receiver.example.com/hooks' });
    expect(subscription.status).toBe(201);
    const revoked = await tokens.issue('attacker');
    await tokens.revoke(revoked.record.id);
    const credentials: FuzzCredentials = {
      attackerToken: await app.tokenFor('attacker'),
      revokedToken: revoked.token,
      victimIds: VICTIM_PLANTS.map((plant) => plant.id),
      victimSubscriptionId: subscription.body.id,
    };
    const secrets = [credentials.attackerToken, credentials.revokedToken, victimToken];
    const dataSource = app.app.get(DataSource);
    const before = await snapshotDatabase(dataSource);
    const fastify = app.app.getHttpAdapter().getInstance();

    let sent = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(hostileRequest(credentials), async (request) => {
        sent += 1;
        const response = await fastify.inject({
          method: request.method as 'GET',
          url: request.url,
          headers: request.headers,
          payload: request.body,
        });
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        const problems = problemsOf(
          request,
          { status: response.statusCode, headers: response.headers, body: response.body },
          secrets,
        );
        expect(problems, describeRequest(request)).toEqual([]);
      }),
      { numRuns: RUNS, seed: SEED },
    );

    expect(sent).toBeGreaterThanOrEqual(RUNS);
    expect(await snapshotDatabase(dataSource)).toBe(before);
    // Nothing reached Object.prototype (the test shares the app's process).
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    // Still serving, and the victim's plants are all there.
    expect((await app.http().get('/health/ready')).status).toBe(200);
    expect((await victim.list()).body).toHaveLength(VICTIM_PLANTS.length);
    const subscriptions = await app
      .http()
      .get('/webhooks')
      .set('Authorization', `Bearer ${victimToken}`);
    expect(subscriptions.body.map((s: { id: string }) => s.id)).toEqual([subscription.body.id]);
    const summary = [...statuses.entries()].sort(([a], [b]) => a - b);
    console.info(
      `hostile input on ${kind}: ${sent} requests, statuses ${summary.map(([s, n]) => `${s}x${n}`).join(' ')}`,
    );
  }, 300_000);
});
