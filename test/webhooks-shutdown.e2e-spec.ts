import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually.js';
import { killHard, startService } from './support/service-process.js';
import { startApp } from './support/test-app.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { webhooksClient } from './support/webhooks-client.js';

const TOKEN = 'pst_webhooks-shutdown-token-0123456789abcdefghij';
const HANGING = {
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  // Longer than the 5 s grace: shutdown, not the timeout, ends the attempt.
  WEBHOOK_TIMEOUT_MS: '20000',
};

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
    const env = HANGING;
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

  it('gives its grace from the moment shutdown begins, also while every place is taken', async () => {
    const database: TestDatabase = await createTestDatabase(kind);
    cleanups.push(() => database.drop());
    const receiver: WebhookReceiver = await startReceiver(() => 'hang');
    cleanups.push(() => receiver.close());
    // One place: the dispatcher's pass waits for it, with a second delivery due.
    const app = await startApp(database, { ...HANGING, WEBHOOK_CONCURRENCY: '1' });
    const { auth } = await app.newCaller();
    const hooks = webhooksClient(app, auth);
    await hooks.subscribe(receiver.url);
    await hooks.createPlant('{"id":1,"name":"Fern"}');
    await hooks.createPlant('{"id":2,"name":"Moss"}');
    await receiver.waitFor(1);
    const started = Date.now();
    await app.close();
    const took = Date.now() - started;
    // The grace (5 s), not the hanging attempt's own timeout (20 s).
    expect(took).toBeGreaterThanOrEqual(4500);
    expect(took).toBeLessThan(15_000);
  }, 60_000);

  it('stops taking connections once the drain is over, while a delivery still has its grace', async () => {
    const database: TestDatabase = await createTestDatabase(kind);
    cleanups.push(() => database.drop());
    const receiver: WebhookReceiver = await startReceiver(() => 'hang');
    cleanups.push(() => receiver.close());
    const cwd = await mkdtemp(join(tmpdir(), 'plant-store-shutdown-'));
    cleanups.push(() => rm(cwd, { recursive: true, force: true }));
    const service = await startService(cwd, {
      ...HANGING,
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      BOOTSTRAP_TOKEN: TOKEN,
      SHUTDOWN_DRAIN_MS: '200',
    });
    cleanups.push(() => killHard(service));
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const subscribed = await fetch(`${service.url}/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `${receiver.url}/hook` }),
    });
    expect(subscribed.status).toBe(201);
    const created = await fetch(`${service.url}/plants`, {
      method: 'POST',
      headers,
      body: '{"id":1,"name":"Fern"}',
    });
    expect(created.status).toBe(200);
    await receiver.waitFor(1);
    const exited = new Promise<number | null>((resolve) => service.child.once('exit', resolve));
    service.child.kill('SIGTERM');
    await eventually(
      () => /closing: finishing requests in flight/.test(service.output()),
      'the line that says the drain is over',
    );
    // The dispatcher still waits for its delivery: the process runs, and takes no connection.
    await expect(fetch(`${service.url}/health/live`)).rejects.toThrow();
    expect(service.child.exitCode).toBeNull();
    expect(await exited).toBe(0);
  }, 60_000);
});
