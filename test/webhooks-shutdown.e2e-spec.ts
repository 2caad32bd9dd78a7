import { afterAll, describe, expect, it } from 'vitest';
import { startApp } from './support/test-app.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { webhooksClient } from './support/webhooks-client.js';

describe.each(databaseKinds())('webhook dispatcher shutdown on %s', (kind) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('gives an in-flight delivery its grace, then returns its claim unattempted', async () => {
    const database: TestDatabase = await createTestDatabase(kind);
    cleanups.push(() => database.drop());
    const receiver: WebhookReceiver = await startReceiver(() => 'hang');
    cleanups.push(() => receiver.close());
    const env = {
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      // Longer than the 5 s grace: shutdown, not the timeout, ends the attempt.
      WEBHOOK_TIMEOUT_MS: '20000',
    };
    const first = await startApp(database, env);
    const { auth } = await first.newCaller();
    const hooks = webhooksClient(first, auth);
    const subscription = await hooks.subscribe(receiver.url);
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    await receiver.waitFor(1);
    const started = Date.now();
    await first.close();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(4500);
    expect(took).toBeLessThan(15_000);

    // The claim came back: the next instance sends it at once, as a first attempt.
    receiver.answer = () => 200;
    const second = await startApp(database, env);
    cleanups.push(() => second.close());
    const again = webhooksClient(second, auth);
    const [delivery] = await again.waitForDeliveries(
      subscription.id,
      ([d]) => d?.state === 'delivered',
    );
    expect(delivery.attempts).toBe(1);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1].headers['webhook-id']).toBe(
      receiver.received[0].headers['webhook-id'],
    );
  }, 60_000);
});
