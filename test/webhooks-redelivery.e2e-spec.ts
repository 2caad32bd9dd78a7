import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { expectError } from './support/expect-error.js';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { type Delivery, webhooksClient } from './support/webhooks-client.js';

const allIn = (state: Delivery['state'], count: number) => (deliveries: Delivery[]) =>
  deliveries.length === count && deliveries.every((d) => d.state === state);

describe.each(databaseKinds())('webhook redelivery on %s', (kind) => {
  const t = useTestApp(kind, {
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    WEBHOOK_RETRY_SCHEDULE: '50ms',
    WEBHOOK_TIMEOUT_MS: '1000',
  });
  let receiver: WebhookReceiver;
  /** What the receiver answers, by path: each owner's subscription has one of its own. */
  const statusOf = new Map<string, number>();
  beforeAll(async () => {
    receiver = await startReceiver((_, received) => statusOf.get(received.path) ?? 200);
  });
  afterAll(() => receiver.close());

  /** A new owner subscribed to the receiver (at its own path); the receiver answers `status`. */
  const subscribed = async (status: number) => {
    const caller = await t.current.newCaller();
    const answer = (next: number) => statusOf.set(`/hooks/${caller.owner}`, next);
    answer(status);
    const hooks = webhooksClient(t.current, caller.auth);
    const subscription = await hooks.subscribe(`${receiver.url}/${caller.owner}`);
    const post = (path: string, body?: object) =>
      t.current
        .http()
        .post(`/webhooks/${subscription.id}${path}`)
        .set('Authorization', caller.auth)
        .send(body);
    return { ...caller, hooks, subscription, post, answer };
  };
  const idsSentTo = (owner: string) =>
    receiver.received
      .filter((r) => r.path === `/hooks/${owner}`)
      .map((r) => r.headers['webhook-id']);

  it('sends a failed or delivered delivery again with the same webhook-id; a pending one is a 409', async () => {
    const { owner, hooks, subscription, post, answer } = await subscribed(500);
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    const [failed] = await hooks.waitForDeliveries(subscription.id, allIn('failed', 1));
    expect(failed.attempts).toBe(2);
    answer(200);

    const retried = await post(`/deliveries/${failed.eventId}/retry`);
    expect(retried.status).toBe(202);
    expect(retried.text).toBe('');
    const [delivered] = await hooks.waitForDeliveries(subscription.id, allIn('delivered', 1));
    expect(delivered).toMatchObject({ eventId: failed.eventId, attempts: 1, lastStatus: 200 });
    expect(idsSentTo(owner)).toEqual([failed.eventId, failed.eventId, failed.eventId]);

    expect((await post(`/deliveries/${failed.eventId}/retry`)).status).toBe(202);
    await hooks.waitForDeliveries(subscription.id, () => idsSentTo(owner).length === 4);
    await hooks.waitForDeliveries(subscription.id, allIn('delivered', 1));

    // A pending delivery (due in an hour) is sent on its own.
    await t.current.app
      .get(DataSource)
      .manager.update(
        WebhookDelivery,
        { id: failed.eventId },
        { state: 'pending', nextAttemptAt: Date.now() + 3_600_000 },
      );
    expectError(await post(`/deliveries/${failed.eventId}/retry`), 409, /pending/);
  });

  it('recovers every failed delivery created since a time, and only those', async () => {
    const { owner, hooks, subscription, post, answer } = await subscribed(503);
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    const [first] = await hooks.waitForDeliveries(subscription.id, allIn('failed', 1));
    // A millisecond after the first event was written; the next two are written
    // later, after its two attempts and their answers.
    const since = new Date(Date.parse(first.createdAt) + 1).toISOString();
    await hooks.createPlant('{"id":2,"name":"Moss"}');
    await hooks.createPlant('{"id":3,"name":"Ivy"}');
    const failed = await hooks.waitForDeliveries(subscription.id, allIn('failed', 3));
    answer(204);

    // Nothing failed since a time to come: nothing is sent.
    expect((await post('/recover', { since: '2999-01-01T00:00:00Z' })).status).toBe(202);
    const recovered = await post('/recover', { since });
    expect(recovered.status).toBe(202);
    expect(recovered.text).toBe('');
    const after = await hooks.waitForDeliveries(
      subscription.id,
      (d) => d.filter((x) => x.state === 'delivered').length === 2,
    );
    // Newest first: the two since `since` delivered, the first one still failed.
    expect(after.map((d) => [d.eventId, d.state])).toEqual([
      [failed[0].eventId, 'delivered'],
      [failed[1].eventId, 'delivered'],
      [failed[2].eventId, 'failed'],
    ]);
    expect(idsSentTo(owner).slice(-2).sort()).toEqual(
      [failed[0].eventId, failed[1].eventId].sort(),
    );
  });

  it("answers 404 for another owner's or an unknown id, 400 for a bad since, 409 when disabled", async () => {
    const alice = await subscribed(410);
    const bob = await subscribed(200);
    await bob.hooks.createPlant('{"id":1,"name":"Fern"}');
    const [bobs] = await bob.hooks.waitForDeliveries(bob.subscription.id, allIn('delivered', 1));
    const asAlice = (path: string, body?: object) =>
      t.current.http().post(path).set('Authorization', alice.auth).send(body);
    for (const path of [
      `/webhooks/${bob.subscription.id}/deliveries/${bobs.eventId}/retry`,
      `/webhooks/${bob.subscription.id}/recover`,
      '/webhooks/nope/recover',
      `/webhooks/nope/deliveries/${bobs.eventId}/retry`,
    ]) {
      expectError(
        await asAlice(path, { since: '2026-01-01T00:00:00Z' }),
        404,
        /no webhook subscription/,
      );
    }
    // Bob's event id through alice's own subscription names no delivery of hers.
    for (const eventId of [bobs.eventId, 'msg_x', `${bobs.eventId}%00`]) {
      expectError(
        await alice.post(`/deliveries/${eventId}/retry`),
        404,
        /no delivery with this event id/,
      );
    }
    for (const body of [
      {},
      { since: 'yesterday' },
      { since: '2026-11-24' },
      { since: 5 },
      { since: '2026-11-24T12:00:00Z', more: 1 },
    ]) {
      expectError(
        await alice.post('/recover', body),
        400,
        /since must be an RFC 3339|more should not exist/,
      );
    }
    // A date-time of the right form naming a day that does not exist.
    for (const since of ['2020-02-30T00:00:00Z', '2021-02-29T00:00:00Z', '2020-04-31T10:00:00Z']) {
      expectError(
        await alice.post('/recover', { since }),
        400,
        /^since must be a date and time that exist: 20\d\d-0[24] has no day (29|30|31)$/,
      );
    }
    // A 410 disables the subscription: nothing can be sent to it again.
    await alice.hooks.createPlant('{"id":1,"name":"Fern"}');
    const [gone] = await alice.hooks.waitForDeliveries(alice.subscription.id, allIn('failed', 1));
    expectError(await alice.post(`/deliveries/${gone.eventId}/retry`), 409, /disabled/);
    expectError(await alice.post('/recover', { since: '2026-01-01T00:00:00Z' }), 409, /disabled/);
    expectError(await t.current.http().post(`/webhooks/${bob.subscription.id}/recover`), 401);
  });
});
