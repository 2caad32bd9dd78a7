import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { expectError } from './support/expect-error.js';
import { startApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { eventually } from './support/eventually.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const ENV = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '50',
};

describe.each(databaseKinds())('APP_ROLE on %s', (kind) => {
  let database: TestDatabase;
  const apps: TestApp[] = [];
  let receiver: WebhookReceiver;
  afterAll(async () => {
    for (const app of apps) await app.close();
    await receiver?.close();
    await database?.drop();
  });

  it('api serves the API and sends no webhook; worker serves only health and metrics, and sends what the api stored', async () => {
    database = await createTestDatabase(kind);
    receiver = await startReceiver();
    const api = await startApp(database, { ...ENV, APP_ROLE: 'api' });
    apps.push(api);
    const { auth } = await api.newCaller();
    const subscribed = await api
      .http()
      .post('/webhooks')
      .set('Authorization', auth)
      .send({ url: `${receiver.url}/hook` });
    expect(subscribed.status).toBe(201);
    const created = await api
      .http()
      .post('/plants')
      .set('Authorization', auth)
      .send({ id: 1, name: 'Fern' });
    expect(created.status).toBe(200);
    // No dispatcher in an api instance: the event waits in the outbox (checked
    // below, once the worker has sent it: the api never tried).
    expect(receiver.received).toHaveLength(0);

    const worker = await startApp(database, { ...ENV, APP_ROLE: 'worker' });
    apps.push(worker);
    const http = () => request(worker.app.getHttpServer());
    expect((await http().get('/health/live')).status).toBe(200);
    expect((await http().get('/health/ready')).status).toBe(200);
    expect((await http().get('/metrics')).status).toBe(200);
    for (const path of ['/plants', '/webhooks', '/docs', '/docs-json']) {
      expectError(await http().get(path).set('Authorization', auth), 404);
    }
    expectError(
      await http().post('/plants').set('Authorization', auth).send({ id: 2, name: 'Moss' }),
      404,
    );
    await eventually(
      () => receiver.received.length >= 1,
      () => `${receiver.received.length} events delivered by the worker`,
      10_000,
    );
    expect(receiver.received.map((r) => r.body)).toEqual(['{"id":1,"name":"Fern"}']);
    // Sent once, on its first attempt, and that attempt was the worker's: the api made none.
    // The worker records the attempt once the receiver has answered: wait for the record.
    const deliveries = await eventually(
      async () => {
        const listed = await api
          .http()
          .get(`/webhooks/${subscribed.body.id}/deliveries`)
          .set('Authorization', auth);
        const body = listed.body as { attempts: number }[];
        return body[0]?.attempts === 0 ? undefined : body;
      },
      'the worker to record its attempt',
      10_000,
    );
    expect(deliveries).toMatchObject([{ state: 'delivered', attempts: 1 }]);
    const attempted = /^webhook_deliveries_total\{outcome="delivered"\} (\d+)$/m;
    expect(attempted.exec((await http().get('/metrics')).text)?.[1]).toBe('1');
    expect(attempted.exec((await api.http().get('/metrics')).text)).toBeNull();
  });
});
