import { afterEach, describe, expect, it, vi } from 'vitest';
import { Transactions } from '../src/database/transactions.js';
import { WriteBatch } from '../src/database/write-batch.js';
import { eventually } from './support/eventually.js';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';

const CREATES = 32;

/**
 * On SQLite every commit's flush runs on the event loop, one at a time:
 * creates and deletes that arrive while one commits are written together in
 * the next transaction. (PostgreSQL commits each on a pooled connection of
 * its own, side by side.)
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
