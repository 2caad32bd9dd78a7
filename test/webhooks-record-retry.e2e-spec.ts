import { afterAll, describe, expect, it } from 'vitest';
import { DeliveryAttemptsRepository } from '../src/webhooks/delivery-attempts.repository.js';
import { startApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { webhooksClient } from './support/webhooks-client.js';

/** What a database says when it cannot take a write just now. */
const transient = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

describe.each(databaseKinds())('an attempt whose record fails for a moment, on %s', (kind) => {
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  let app: TestApp;
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
    await database?.drop();
  });

  it('is recorded once the database takes it again, and the receiver gets the event once', async () => {
    database = await createTestDatabase(kind);
    receiver = await startReceiver(() => 200);
    app = await startApp(database, {
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      // A claim of 3 s: left pending, the delivery is claimed and sent again after it.
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_LEASE_MS: '3000',
    });
    const attempts = app.app.get(DeliveryAttemptsRepository);
    const recordAttempt = attempts.recordAttempt.bind(attempts);
    let failures = 0;
    attempts.recordAttempt = (...args) => {
      // The first two records of the 200 fail, as while the database fails over.
      if (failures < 2) {
        failures += 1;
        return Promise.reject(transient());
      }
      return recordAttempt(...args);
    };
    const { auth } = await app.newCaller();
    const hooks = webhooksClient(app, auth);
    const subscription = await hooks.subscribe(receiver.url);
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    const [delivery] = await hooks.waitForDeliveries(
      subscription.id,
      ([d]) => d?.state === 'delivered',
    );
    expect(failures).toBe(2);
    expect(delivery.attempts).toBe(1);
    // Sent once. Left pending, it would have been claimed again once its lease ran out, sent
    // again, and only that second send recorded as delivered.
    expect(receiver.received).toHaveLength(1);
  }, 60_000);
});
