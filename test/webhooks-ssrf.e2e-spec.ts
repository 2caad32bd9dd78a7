import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { webhooksClient } from './support/webhooks-client.js';

/**
 * WEBHOOK_ALLOW_PRIVATE_TARGETS is off: every target below is refused when
 * the delivery is attempted, before any connection is made, and the
 * delivery ends failed with the reason.
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

  it('refuses loopback, 10/8, the metadata address and a name that resolves to 127.0.0.1', async () => {
    const port = new URL(receiver.url).port;
    const targets = [
      [`http://127.0.0.1:${port}/hooks`, /non-public address 127\.0\.0\.1/],
      [`http://[::1]:${port}/hooks`, /non-public address ::1/],
      ['http://10.1.2.3/hooks', /non-public address 10\.1\.2\.3/],
      ['http://169.254.169.254/latest/meta-data/', /non-public address 169\.254\.169\.254/],
      [`http://localhost:${port}/hooks`, /^refused: localhost resolves to non-public address/],
    ] as const;
    const { auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    const subscriptions = [];
    for (const [url] of targets) subscriptions.push(await hooks.subscribe(url));
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    for (const [i, [, reason]] of targets.entries()) {
      const [delivery] = await hooks.waitForDeliveries(
        subscriptions[i].id,
        ([d]) => d?.state === 'failed',
      );
      expect(delivery.attempts).toBe(3);
      expect(delivery.lastError).toMatch(reason);
      expect(delivery).not.toHaveProperty('lastStatus');
    }
    expect(receiver.received).toEqual([]);
  });
});
