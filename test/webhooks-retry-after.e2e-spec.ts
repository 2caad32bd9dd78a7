import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import {
  type AnswerWithHeaders,
  startReceiver,
  type WebhookReceiver,
} from './support/webhook-receiver.js';
import { webhooksClient } from './support/webhooks-client.js';

const MINUTE = 60_000;
/** The schedule's longest wait: the most a Retry-After can hold a delivery back. */
const LONGEST = 120 * MINUTE;

describe.each(databaseKinds())('webhook Retry-After on %s', (kind) => {
  const t = useTestApp(kind, {
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    // The first retry is due almost at once unless the receiver asks for more.
    WEBHOOK_RETRY_SCHEDULE: '100ms,2h',
    WEBHOOK_TIMEOUT_MS: '1000',
  });
  let receiver: WebhookReceiver;
  /** What the receiver answers, by path: each owner's subscription has one of its own. */
  const answerOf = new Map<string, number | AnswerWithHeaders>();
  beforeAll(async () => {
    receiver = await startReceiver((_, received) => answerOf.get(received.path) ?? 200);
  });
  afterAll(() => receiver.close());

  /** Subscribes a new owner whose receiver answers `answer`; creates a plant; returns its pending delivery's wait as the receiver saw it. */
  const waitAfter = async (answer: number | AnswerWithHeaders) => {
    const caller = await t.current.newCaller();
    answerOf.set(`/hooks/${caller.owner}`, answer);
    const hooks = webhooksClient(t.current, caller.auth);
    const subscription = await hooks.subscribe(`${receiver.url}/${caller.owner}`);
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    const [delivery] = await hooks.waitForDeliveries(
      subscription.id,
      (d) => d.length === 1 && d[0].attempts === 1,
    );
    expect(delivery.state).toBe('pending');
    const sentAt = receiver.received.find((r) => r.path === `/hooks/${caller.owner}`)!.at;
    return Date.parse(delivery.nextAttemptAt!) - sentAt;
  };

  it('holds the next attempt back for the seconds a 503 asks for', async () => {
    const wait = await waitAfter({ status: 503, headers: { 'retry-after': '600' } });
    expect(wait).toBeGreaterThan(10 * MINUTE - 1000);
    expect(wait).toBeLessThan(10 * MINUTE + 5000);
  });

  it('holds it back until the HTTP date a 429 names, and never past the longest wait', async () => {
    const at = new Date(Date.now() + 20 * MINUTE).toUTCString();
    const wait = await waitAfter({ status: 429, headers: { 'retry-after': at } });
    expect(wait).toBeGreaterThan(20 * MINUTE - 5000);
    expect(wait).toBeLessThan(20 * MINUTE + 5000);

    const capped = await waitAfter({ status: 503, headers: { 'retry-after': '86400' } });
    expect(capped).toBeGreaterThan(LONGEST - 1000);
    expect(capped).toBeLessThan(LONGEST + 5000);
  });

  it("keeps the schedule's wait when Retry-After is shorter, garbage, or on another status", async () => {
    // The schedule's 100 ms (±20 %) wins over 0 s, a date, an answer it cannot read, and a 500's header.
    for (const answer of [
      { status: 503, headers: { 'retry-after': '0' } },
      { status: 503, headers: { 'retry-after': 'in a while' } },
      { status: 500, headers: { 'retry-after': '600' } },
    ]) {
      const caller = await t.current.newCaller();
      answerOf.set(`/hooks/${caller.owner}`, answer);
      const hooks = webhooksClient(t.current, caller.auth);
      const subscription = await hooks.subscribe(`${receiver.url}/${caller.owner}`);
      await hooks.createPlant('{"id":1,"name":"Fern"}');
      // Retried soon: the second attempt comes on the schedule, not 10 minutes later.
      await hooks.waitForDeliveries(subscription.id, (d) => d.length === 1 && d[0].attempts === 2);
    }
  });
});
