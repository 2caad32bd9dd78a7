import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HostResolver } from '../src/webhooks/host-resolver.js';
import { WebhookSubscription } from '../src/webhooks/webhook-subscription.entity.js';
import { fakeDns } from './support/fake-dns.js';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { webhooksClient } from './support/webhooks-client.js';

/**
 * WEBHOOK_ALLOW_PRIVATE_TARGETS is off. A subscription is checked when it is
 * made, but DNS can change afterwards, and rows from before the check exist:
 * every attempt resolves and checks again, before any connection is made, and
 * the delivery ends failed with a reason that does not show the address.
 */
describe.each(databaseKinds())('webhook targets that are not public on %s', (kind) => {
  const t = useTestApp(kind, {
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    WEBHOOK_RETRY_SCHEDULE: '50ms,50ms',
    WEBHOOK_TIMEOUT_MS: '1000',
  });
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it('refuses at delivery a name that now resolves to loopback, private or metadata addresses', async () => {
    const port = new URL(receiver.url).port;
    const targets = ['127.0.0.1', '::1', '10.1.2.3', '169.254.169.254', '::ffff:0:7f00:1'];
    const dns = fakeDns(t.current, {});
    const { owner, auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    const subscriptions = [];
    for (const [i] of targets.entries()) {
      // Public when subscribed…
      dns[`r${i}.example.com`] = ['93.184.215.14'];
      subscriptions.push(await hooks.subscribe(`http://r${i}.example.com:${port}/hooks`));
    }
    // …then pointed inside: a loopback literal from before the subscription check, too.
    for (const [i, address] of targets.entries()) dns[`r${i}.example.com`] = [address];
    const id = randomUUID();
    await t.current.app.get(DataSource).manager.insert(WebhookSubscription, {
      id,
      owner,
      url: `http://127.0.0.1:${port}/hooks`,
      description: null,
      secret: subscriptions[0].secret,
      createdAt: Date.now(),
      disabledAt: null,
    });
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    for (const subscription of [...subscriptions.map((s) => s.id), id]) {
      const [delivery] = await hooks.waitForDeliveries(
        subscription,
        ([d]) => d?.state === 'failed',
      );
      expect(delivery.attempts).toBe(3);
      expect(delivery.lastError).toBe('refused: target address not allowed');
      expect(delivery).not.toHaveProperty('lastStatus');
    }
    expect(receiver.received).toEqual([]);
  });

  it('records an attempt whatever its error text, cut to the column', async () => {
    const dns = fakeDns(t.current, {});
    const { auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    const host = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.example`;
    dns[host] = ['93.184.215.14'];
    const subscription = await hooks.subscribe(`https://${host}/hooks`);
    // Now the name resolves to nothing: the error names the 253-character host,
    // with a NUL and non-BMP characters that PostgreSQL or a cut could break.
    vi.spyOn(t.current.app.get(HostResolver), 'resolve').mockRejectedValue(
      Object.assign(new Error('boom'), { code: `E\u0000${'🌿'.repeat(200)}` }),
    );
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    const [delivery] = await hooks.waitForDeliveries(
      subscription.id,
      ([d]) => d?.state === 'failed',
    );
    expect(delivery.attempts).toBe(3);
    expect(delivery.lastError!.length).toBeLessThanOrEqual(300);
    expect(delivery.lastError).toMatch(/^request failed: E(🌿)+…$/u);
  });
});
