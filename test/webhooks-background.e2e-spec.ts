import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { webhooksClient } from './support/webhooks-client.js';

/** The request deadline, and a retry due well after it. */
const DEADLINE_MS = 1000;
const RETRY_AFTER = '2500ms';

/**
 * A create wakes this instance's dispatcher, which goes on working long after
 * the create has answered. None of that work may keep the create's database
 * deadline: on PostgreSQL it would fail every statement once the deadline
 * passed, and a retry due later would never be sent. (SQLite keeps no
 * deadline, so there the test shows only that the retry is sent.)
 */
describe.each(databaseKinds())('webhook delivery after the request that woke it, on %s', (kind) => {
  const t = useTestApp(kind, {
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    WEBHOOK_RETRY_SCHEDULE: RETRY_AFTER,
    WEBHOOK_TIMEOUT_MS: '1000',
    DB_REQUEST_DEADLINE_MS: String(DEADLINE_MS),
  });
  let receiver: WebhookReceiver;
  let answers = 0;
  beforeAll(async () => {
    // The first attempt fails, the retry succeeds.
    receiver = await startReceiver(() => (answers++ === 0 ? 500 : 200));
  });
  afterAll(() => receiver.close());

  it("sends a retry that falls due after the create's deadline has passed", async () => {
    const caller = await t.current.newCaller();
    const hooks = webhooksClient(t.current, caller.auth);
    const subscription = await hooks.subscribe(`${receiver.url}/${caller.owner}`);
    const created = Date.now();
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    const [delivery] = await hooks.waitForDeliveries(
      subscription.id,
      (deliveries) => deliveries[0]?.state === 'delivered',
    );
    expect(delivery).toMatchObject({ attempts: 2, lastStatus: 200 });
    // The retry was sent after the deadline the create had.
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1].at - created).toBeGreaterThan(DEADLINE_MS);
  });
});
