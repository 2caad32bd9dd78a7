import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

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
});
