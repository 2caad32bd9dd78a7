import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import { untilNothingPending } from './support/webhook-load.js';
import { type Answer, startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { webhooksClient } from './support/webhooks-client.js';

/** Receivers run on 127.0.0.1 over http: the two opt-ins are on, the schedule short. */
const ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_RETRY_SCHEDULE: '100ms,100ms',
  WEBHOOK_TIMEOUT_MS: '500',
};

describe.each(databaseKinds())('plant-created webhooks on %s', (kind) => {
  const t = useTestApp(kind, ENV);
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  const subscribe = async (auth: string, url: string, description?: string) => {
    const response = await t.current
      .http()
      .post('/webhooks')
      .set('Authorization', auth)
      .send({ url, description });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body as { id: string; secret: string; url: string };
  };

  it('sends each new plant, signed, with the exact NewPlant body, ids exact across int64', async () => {
    const { auth } = await t.current.newCaller();
    const local = await startReceiver();
    try {
      const { secret } = await subscribe(auth, local.url, 'all plants');
      const ids = ['-9223372036854775808', '9007199254740993', '9223372036854775807'];
      for (const [i, id] of ids.entries()) {
        const body = `{"id":${id},"name":"plant ${i} 🌿"${i === 1 ? ',"tag":"t\\"ag"' : ''}}`;
        const response = await t.current
          .http()
          .post('/plants')
          .set('Authorization', auth)
          .set('Content-Type', 'application/json')
          .send(body);
        expect(response.status).toBe(200);
      }
      const received = await local.waitFor(3);
      const bodies = received.map((r) => r.body).sort();
      expect(bodies).toEqual(
        [
          '{"id":-9223372036854775808,"name":"plant 0 🌿"}',
          '{"id":9007199254740993,"name":"plant 1 🌿","tag":"t\\"ag"}',
          '{"id":9223372036854775807,"name":"plant 2 🌿"}',
        ].sort(),
      );
      for (const request of received) {
        expect(request.headers['content-type']).toBe('application/json');
        expect(request.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
        expect(
          Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000),
        ).toBeLessThan(60);
        // Throws unless the signature is right.
        new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
      }
      expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(3);
    } finally {
      await local.close();
    }
  });

  const nothingPending = () =>
    untilNothingPending(async () => (await t.current.http().get('/metrics')).text, 15_000);

  /** A new owner subscribed to a receiver of its own that answers with `answer`. */
  const subscribed = async (answer: Answer) => {
    const local = await startReceiver(answer);
    receivers.push(local);
    const { auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    const subscription = await hooks.subscribe(local.url);
    return { local, hooks, subscription, auth };
  };
  const receivers: WebhookReceiver[] = [];
  afterAll(async () => {
    for (const local of receivers) await local.close();
  });

  it('retries a 500 twice and delivers on the third attempt, with the same webhook-id', async () => {
    const { local, hooks, subscription } = await subscribed((n) => (n <= 2 ? 500 : 200));
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    const received = await local.waitFor(3);
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    // The schedule's 100 ms wait, within the ±20 % jitter.
    expect(received[1].at - received[0].at).toBeGreaterThanOrEqual(75);
    const [delivery] = await hooks.waitForDeliveries(
      subscription.id,
      ([d]) => d?.state === 'delivered',
    );
    expect(delivery).toMatchObject({
      eventId: received[0].headers['webhook-id'],
      state: 'delivered',
      attempts: 3,
      lastStatus: 200,
    });
    expect(delivery).not.toHaveProperty('nextAttemptAt');
    // Counted by outcome, with the latency histogram and the pending gauge.
    const metrics = (await t.current.http().get('/metrics')).text;
    expect(metrics).toMatch(/^webhook_deliveries_total\{outcome="retry"\} [1-9]/m);
    expect(metrics).toMatch(/^webhook_deliveries_total\{outcome="delivered"\} [1-9]/m);
    expect(metrics).toMatch(/^webhook_delivery_duration_seconds_count [1-9]/m);
    expect(metrics).toMatch(/^webhook_deliveries_pending \d+$/m);
  });

  it('retries a receiver that does not answer within the timeout', async () => {
    const { local, hooks, subscription } = await subscribed((n) => (n === 1 ? 'hang' : 204));
    await hooks.createPlant('{"id":2,"name":"Moss"}');
    const received = await local.waitFor(2);
    expect(received[1].at - received[0].at).toBeGreaterThanOrEqual(500);
    expect(received[1].headers['webhook-id']).toBe(received[0].headers['webhook-id']);
    const [delivery] = await hooks.waitForDeliveries(
      subscription.id,
      ([d]) => d?.state === 'delivered',
    );
    expect(delivery).toMatchObject({ state: 'delivered', attempts: 2, lastStatus: 204 });
  });

  it('marks a delivery failed once the schedule is spent, with a sanitised excerpt of the answer', async () => {
    const { local, hooks, subscription } = await subscribed(() => 503);
    await hooks.createPlant('{"id":3,"name":"Ivy"}');
    const [delivery] = await hooks.waitForDeliveries(
      subscription.id,
      ([d]) => d?.state === 'failed',
    );
    expect(delivery).toMatchObject({
      state: 'failed',
      attempts: 3,
      lastStatus: 503,
      lastError: 'receiver answered 503: answer 503',
    });
    expect(local.received).toHaveLength(3);
  });

  it('disables the subscription on a 410: nothing more is sent', async () => {
    const { local, hooks, subscription, auth } = await subscribed(() => 410);
    await hooks.createPlant('{"id":4,"name":"Sage"}');
    const [delivery] = await hooks.waitForDeliveries(
      subscription.id,
      ([d]) => d?.state === 'failed',
    );
    expect(delivery).toMatchObject({ state: 'failed', attempts: 1, lastStatus: 410 });
    const list = await t.current.http().get('/webhooks').set('Authorization', auth);
    expect(list.body[0].disabledAt).toEqual(expect.any(String));
    await hooks.createPlant('{"id":5,"name":"Thyme"}');
    await nothingPending();
    expect(local.received).toHaveLength(1);
    expect(await hooks.deliveries(subscription.id)).toHaveLength(1);
  });

  it("sends one event per new plant: none for a replay or a 409, never another owner's plant", async () => {
    const alice = await subscribed(() => 200);
    const bob = await subscribed(() => 200);
    await alice.hooks.createPlant('{"id":6,"name":"Rue"}');
    await alice.hooks.createPlant('{"id":6,"name":"Rue"}');
    const conflict = await t.current
      .http()
      .post('/plants')
      .set('Authorization', alice.auth)
      .send({ id: 6, name: 'Other' });
    expect(conflict.status).toBe(409);
    await bob.hooks.createPlant('{"id":6,"name":"Bob\'s"}');
    await alice.local.waitFor(1);
    await bob.local.waitFor(1);
    await nothingPending();
    expect(alice.local.received.map((r) => r.body)).toEqual(['{"id":6,"name":"Rue"}']);
    expect(bob.local.received.map((r) => r.body)).toEqual(['{"id":6,"name":"Bob\'s"}']);
    expect(await alice.hooks.deliveries(alice.subscription.id)).toHaveLength(1);
  });

  it("sends every plant to each of the owner's subscriptions once, each recorded delivered", async () => {
    const local = await startReceiver(() => 204);
    receivers.push(local);
    const { auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    const subscriptions = [];
    for (let s = 0; s < 5; s++) subscriptions.push(await hooks.subscribe(`${local.url}?s=${s}`));
    const plants = [20, 21, 22, 23, 24, 25];
    // Concurrent creates: their deliveries end together and are recorded together.
    await Promise.all(plants.map((id) => hooks.createPlant(`{"id":${id},"name":"Plant ${id}"}`)));
    await local.waitFor(subscriptions.length * plants.length);
    for (const subscription of subscriptions) {
      const deliveries = await hooks.waitForDeliveries(
        subscription.id,
        (list) => list.length === plants.length && list.every((d) => d.state === 'delivered'),
      );
      expect(deliveries.map((d) => d.attempts)).toEqual(plants.map(() => 1));
    }
    const sent = local.received.map((r) => `${r.path} ${r.body}`).sort();
    const expected = subscriptions.flatMap((_, s) =>
      plants.map((id) => `/hooks?s=${s} {"id":${id},"name":"Plant ${id}"}`),
    );
    expect(sent).toEqual(expected.sort());
    expect(new Set(local.received.map((r) => r.headers['webhook-id'])).size).toBe(sent.length);
  });

  it('drops the events of a deleted subscription', async () => {
    const { local, hooks, subscription, auth } = await subscribed(() => 500);
    await hooks.createPlant('{"id":8,"name":"Mint"}');
    await local.waitFor(1);
    const deleted = await t.current
      .http()
      .delete(`/webhooks/${subscription.id}`)
      .set('Authorization', auth);
    expect(deleted.status).toBe(204);
    await nothingPending();
    expect(local.received).toHaveLength(1);
  });
});
