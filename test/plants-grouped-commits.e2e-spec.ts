import { DataSource } from 'typeorm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Transactions } from '../src/database/transactions.js';
import { CompiledQuery } from '../src/database/compiled-query.js';
import { KeyedWriteBatches, WriteBatch } from '../src/database/write-batch.js';
import { eventually } from './support/eventually.js';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { webhooksClient } from './support/webhooks-client.js';

const CREATES = 32;

/**
 * On SQLite every commit's flush runs on the event loop, one at a time:
 * creates and deletes that arrive while one commits are written together in
 * the next transaction. (PostgreSQL commits each on a pooled connection of
 * its own, side by side; there an owner's creates are grouped, below.)
 */
describe.skipIf(!databaseKinds().includes('sqlite'))('writes grouped on sqlite', () => {
  const t = useTestApp('sqlite');
  afterEach(() => vi.restoreAllMocks());

  it('commits creates that arrive during a commit together; a conflict among them fails only its own create', async () => {
    const { auth } = await t.current.newCaller();
    const post = (body: object) =>
      t.current.http().post('/plants').set('Authorization', auth).send(body);
    expect((await post({ id: 1, name: 'Fern' })).status).toBe(200);

    const transactions = t.current.app.get(Transactions);
    const run = vi.spyOn(transactions, 'run');
    const added = vi.spyOn(WriteBatch.prototype, 'add');
    // A write turn held open, as a slow commit would: every create queues behind it.
    let release = (): void => {};
    const held = transactions.run(() => new Promise<void>((resolve) => (release = resolve)));
    const bodies = [
      { id: 1, name: 'Ivy' }, // the id taken by another plant: 409
      { id: 1, name: 'Fern' }, // an exact replay: 200
      ...Array.from({ length: CREATES - 2 }, (_, i) => ({ id: 100 + i, name: `plant ${i}` })),
    ];
    const answers = Promise.all(bodies.map((body) => post(body)));
    await eventually(
      () => added.mock.calls.length === CREATES,
      () => `${added.mock.calls.length} of ${CREATES} creates queued`,
      10_000,
      10,
    );
    release();
    await held;
    const statuses = (await answers).map((answer) => answer.status);

    expect(statuses).toEqual([409, ...Array(CREATES - 1).fill(200)]);
    // The held turn, then at most two transactions for the 32 creates: the one
    // that was waiting for the turn, and one for all that queued behind it.
    expect(run.mock.calls.length).toBeLessThanOrEqual(3);
    const listed = await t.current.http().get('/plants').set('Authorization', auth);
    expect(listed.body).toHaveLength(CREATES - 1);
    expect(listed.body[0]).toEqual({ name: 'Fern' });
  });

  it('commits deletes that arrive during a commit together; of two deletes of one plant one is a 204, the other a 404', async () => {
    const { auth } = await t.current.newCaller();
    for (let id = 1; id <= 10; id++) {
      const created = await t.current
        .http()
        .post('/plants')
        .set('Authorization', auth)
        .send({ id, name: `plant ${id}` });
      expect(created.status).toBe(200);
    }
    const transactions = t.current.app.get(Transactions);
    const run = vi.spyOn(transactions, 'run');
    const added = vi.spyOn(WriteBatch.prototype, 'add');
    let release = (): void => {};
    const held = transactions.run(() => new Promise<void>((resolve) => (release = resolve)));
    // Plants 1 to 10, plant 1 twice, and an id that was never created.
    const ids = [1, 1, ...Array.from({ length: 9 }, (_, i) => i + 2), 404];
    const answers = Promise.all(
      ids.map((id) => t.current.http().delete(`/plants/${id}`).set('Authorization', auth)),
    );
    await eventually(
      () => added.mock.calls.length === ids.length,
      () => `${added.mock.calls.length} of ${ids.length} deletes queued`,
      10_000,
      10,
    );
    release();
    await held;
    const statuses = (await answers).map((answer) => answer.status);

    expect(statuses.slice(0, 2).sort()).toEqual([204, 404]);
    expect(statuses.slice(2)).toEqual([...Array(9).fill(204), 404]);
    expect(run.mock.calls.length).toBeLessThanOrEqual(3);
    const listed = await t.current.http().get('/plants').set('Authorization', auth);
    expect(listed.body).toEqual([]);
  });
});

/**
 * On PostgreSQL an owner's creates that arrive while one of that owner's is
 * being written are written together, in one statement: a taken id there
 * inserts nothing and fails no other create, and each plant gets its own
 * events.
 */
describe.skipIf(!databaseKinds().includes('postgres'))('creates grouped on postgres', () => {
  const t = useTestApp('postgres', {
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());
  afterEach(() => vi.restoreAllMocks());

  it("writes an owner's creates that queue behind its write in one statement; a conflict among them fails only its own create", async () => {
    const { owner, auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    const urls = [`${receiver.url}/a`, `${receiver.url}/b`];
    for (const url of urls) await hooks.subscribe(url);
    const post = (body: object) =>
      t.current.http().post('/plants').set('Authorization', auth).send(body);
    expect((await post({ id: 1, name: 'Fern' })).status).toBe(200);
    await receiver.waitFor(2);

    const rows = vi.spyOn(CompiledQuery.prototype, 'rows');
    const affected = vi.spyOn(CompiledQuery.prototype, 'affected');
    const plantInserts = () =>
      [...rows.mock.contexts, ...affected.mock.contexts].filter((query) =>
        (query as CompiledQuery<string>).sql.includes('INSERT INTO "plants"'),
      ).length;
    const added = vi.spyOn(KeyedWriteBatches.prototype, 'add');
    // The plants table locked against inserts, as a slow statement would
    // hold the owner's write: the first create waits for it, the rest queue.
    const lock = t.current.app.get(DataSource).createQueryRunner();
    await lock.connect();
    await lock.startTransaction();
    await lock.query('LOCK TABLE plants IN EXCLUSIVE MODE');
    const bodies = [
      { id: 1, name: 'Ivy' }, // the id taken by another plant: 409
      { id: 1, name: 'Fern' }, // an exact replay: 200
      { id: 2, name: 'Moss' }, // one id twice with two names: one 200, one 409
      { id: 2, name: 'Sage' },
      { id: 3, name: 'Mint', tag: 'herb' }, // one id twice, the same plant: 200 twice
      { id: 3, name: 'Mint', tag: 'herb' },
      ...Array.from({ length: CREATES - 6 }, (_, i) => ({ id: 100 + i, name: `plant ${i}` })),
    ];
    let answers: Promise<Array<{ status: number }>> | undefined;
    try {
      answers = Promise.all(bodies.map((body) => post(body)));
      await eventually(
        () => added.mock.calls.length === CREATES,
        () => `${added.mock.calls.length} of ${CREATES} creates queued`,
        10_000,
        10,
      );
    } finally {
      await lock.commitTransaction();
      await lock.release();
    }
    const statuses = (await answers).map((answer) => answer.status);

    expect(statuses.slice(0, 2)).toEqual([409, 200]);
    expect(statuses.slice(2, 4).sort()).toEqual([200, 409]);
    expect(statuses.slice(4)).toEqual(Array(CREATES - 4).fill(200));
    // The create that waited for the lock, then one statement for all that
    // queued behind it (those that lost a race look their winner up apart).
    expect(plantInserts()).toBe(2);
    const listed = await t.current.http().get('/plants').set('Authorization', auth);
    const created = CREATES - 3;
    expect(listed.body).toHaveLength(created);
    expect(listed.body[0]).toEqual({ name: 'Fern' });
    expect(listed.body[2]).toEqual({ name: 'Mint', tag: 'herb' });

    // Each new plant's own event, once to each subscription.
    const received = await receiver.waitFor(2 + 2 * (created - 1));
    const events = received.slice(2).map(({ path, body }) => `${path} ${body}`);
    const winner = statuses[2] === 200 ? bodies[2] : bodies[3];
    const plants = [winner, bodies[4], ...bodies.slice(6)].map((body) => JSON.stringify(body));
    expect(events.sort()).toEqual(
      urls
        .map((url) => new URL(url).pathname)
        .flatMap((path) => plants.map((plant) => `${path} ${plant}`))
        .sort(),
    );
    // And no other event stored: none for a replay or for a create that lost its id.
    const [stored] = await t.current.app.get(DataSource).query<[{ count: number }]>(
      `SELECT count(*)::int AS "count" FROM webhook_deliveries d
       JOIN webhook_subscriptions s ON s.id = d.subscription_id WHERE s.owner = $1`,
      [owner],
    );
    expect(stored.count).toBe(2 * created);
  });
});
