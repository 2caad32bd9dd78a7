import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { webhooksClient } from './support/webhooks-client.js';

const HOUR = 3_600_000;
/** An event id of the real shape (`msg_` and 32 hex digits), numbered. */
const eventId = (n: number) => `msg_${n.toString(16).padStart(32, '0')}`;
/** A scraped sample's value, e.g. `webhook_deliveries_pending 3`. */
const sample = (text: string, name: string) =>
  Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1]);

describe.each(databaseKinds())('webhook retention on %s', (kind) => {
  const t = useTestApp(kind, {
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    // Swept every tenth of it (6 s); what finished a minute ago or earlier goes.
    WEBHOOK_RETENTION: '1m',
  });
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it('deletes deliveries finished longer ago than the retention; pending and recent ones stay', async () => {
    const { auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    const subscription = await hooks.subscribe(receiver.url);
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    const [sent] = await hooks.waitForDeliveries(
      subscription.id,
      (d) => d.length === 1 && d[0].state === 'delivered',
    );

    const manager = t.current.app.get(DataSource).manager;
    // The dispatcher records when it finished: retention counts from then.
    const recorded = await manager.findOneByOrFail(WebhookDelivery, { id: sent.eventId });
    expect(recorded.finishedAt).toBeGreaterThanOrEqual(recorded.createdAt);

    const now = Date.now();
    const [PENDING, RECENT] = [eventId(9002), eventId(9003)];
    const row = (id: string, fields: Partial<WebhookDelivery>) => ({
      id,
      subscriptionId: subscription.id,
      payload: '{"id":2,"name":"Moss"}',
      attempts: 1,
      createdAt: now - 48 * HOUR,
      ...fields,
    });
    // More than one batch of old rows, so the sweep goes on after a full one.
    const old = Array.from({ length: 1100 }, (_, i) =>
      row(eventId(i), { state: i % 2 ? 'delivered' : 'failed', finishedAt: now - 2 * HOUR }),
    );
    for (let i = 0; i < old.length; i += 100) {
      await manager.insert(WebhookDelivery, old.slice(i, i + 100));
    }
    await manager.insert(WebhookDelivery, [
      // Finished by an instance that records no finish time: counted from its creation.
      row(eventId(9001), { state: 'failed', finishedAt: null }),
      // Old, but still pending (due in an hour): never deleted.
      row(PENDING, { state: 'pending', nextAttemptAt: now + HOUR, finishedAt: null }),
      // Created long ago, finished just now (sent again): kept for the retention from now.
      row(RECENT, { state: 'delivered', finishedAt: now }),
    ]);
    const pendingBefore = sample(
      (await t.current.http().get('/metrics')).text,
      'webhook_deliveries_pending',
    );
    expect(pendingBefore).toBe(1);

    const left = await hooks.waitForDeliveries(subscription.id, (d) => d.length === 3, 30_000);
    expect(left.map((d) => [d.eventId, d.state]).sort()).toEqual(
      [
        [PENDING, 'pending'],
        [RECENT, 'delivered'],
        [sent.eventId, 'delivered'],
      ].sort(),
    );
    const metrics = (await t.current.http().get('/metrics')).text;
    expect(sample(metrics, 'webhook_deliveries_pending')).toBe(1);
    // The attempt counter still counts the attempt: deleting rows takes nothing off it.
    expect(metrics).toMatch(/^webhook_deliveries_total\{outcome="delivered"\} [1-9]/m);
  });
});
