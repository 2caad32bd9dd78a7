import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually.js';
import { expectError } from './support/expect-error.js';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import {
  type ReceivedWebhook,
  startReceiver,
  type WebhookReceiver,
} from './support/webhook-receiver.js';
import { webhooksClient } from './support/webhooks-client.js';

/** Whether a receiver holding `secret` accepts the request, as the standardwebhooks package verifies. */
const verifies = (secret: string, request: ReceivedWebhook): boolean => {
  try {
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

describe.each(databaseKinds())('webhook secret rotation on %s', (kind) => {
  const rotationApp = (overlap: string) =>
    useTestApp(kind, {
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      WEBHOOK_SECRET_OVERLAP: overlap,
    });
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  describe('with the default overlap', () => {
    const t = rotationApp('24h');

    it('answers a new secret once; deliveries carry the new and the old signature, the newest two', async () => {
      const { auth } = await t.current.newCaller();
      const hooks = webhooksClient(t.current, auth);
      const first = await hooks.subscribe(receiver.url);
      const rotate = () =>
        t.current.http().post(`/webhooks/${first.id}/rotate-secret`).set('Authorization', auth);
      const rotated = await rotate();
      expect(rotated.status).toBe(200);
      expect(Object.keys(rotated.body)).toEqual(['secret']);
      const second = rotated.body.secret as string;
      expect(second).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(second).not.toBe(first.secret);
      const list = await t.current.http().get('/webhooks').set('Authorization', auth);
      expect(JSON.stringify(list.body)).not.toContain('whsec_');

      await hooks.createPlant('{"id":1,"name":"Fern"}');
      const [one] = (await receiver.waitFor(receiver.received.length + 1)).slice(-1);
      expect(one.headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
      expect(verifies(second, one)).toBe(true);
      expect(verifies(first.secret, one)).toBe(true);

      // A second rotation within the overlap: the newest two sign, the first no longer.
      const third = (await rotate()).body.secret as string;
      await hooks.createPlant('{"id":2,"name":"Moss"}');
      const [two] = (await receiver.waitFor(receiver.received.length + 1)).slice(-1);
      expect(two.headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
      expect([third, second, first.secret].map((s) => verifies(s, two))).toEqual([
        true,
        true,
        false,
      ]);
    });

    it("answers 404 for another owner's or an unknown subscription, and changes nothing", async () => {
      const alice = await t.current.newCaller();
      const bob = await t.current.newCaller();
      const bobs = await webhooksClient(t.current, bob.auth).subscribe(`${receiver.url}/bob`);
      for (const id of [bobs.id, 'nope', '00000000-0000-4000-8000-000000000000']) {
        expectError(
          await t.current
            .http()
            .post(`/webhooks/${id}/rotate-secret`)
            .set('Authorization', alice.auth),
          404,
          /no webhook subscription with this id/,
        );
      }
      expectError(await t.current.http().post(`/webhooks/${bobs.id}/rotate-secret`), 401);
      // Bob's secret is still his only one.
      const before = receiver.received.length;
      await webhooksClient(t.current, bob.auth).createPlant('{"id":1,"name":"Fern"}');
      const [sent] = (await receiver.waitFor(before + 1)).slice(-1);
      expect(sent.path).toBe('/hooks/bob');
      expect(sent.headers['webhook-signature']).toMatch(/^v1,\S+$/);
      expect(verifies(bobs.secret, sent)).toBe(true);
    });
  });

  describe('once the overlap is over', () => {
    const t = rotationApp('1ms');

    it('signs with the new secret alone', async () => {
      const { auth } = await t.current.newCaller();
      const hooks = webhooksClient(t.current, auth);
      const first = await hooks.subscribe(`${receiver.url}/short`);
      const rotated = await t.current
        .http()
        .post(`/webhooks/${first.id}/rotate-secret`)
        .set('Authorization', auth);
      // The overlap of 1 ms, counted from before the answer, is over once the clock has moved on.
      const answered = Date.now();
      await eventually(() => Date.now() > answered, 'the clock to move on', 1000, 1);
      await hooks.createPlant('{"id":1,"name":"Fern"}');
      const [sent] = (await receiver.waitFor(receiver.received.length + 1)).slice(-1);
      expect(sent.headers['webhook-signature']).toMatch(/^v1,\S+$/);
      expect(verifies(rotated.body.secret as string, sent)).toBe(true);
      expect(verifies(first.secret, sent)).toBe(false);
    });
  });
});
