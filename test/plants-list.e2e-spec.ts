import { describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { PlantsRepository } from '../src/plants/plants.repository.js';
import { LIST_PAGE_SIZE } from '../src/plants/list-pages.js';
import { expectError } from './support/expect-error.js';
import { plantsClient } from './support/plants-client.js';
import { databaseKinds } from './support/test-database.js';
import { useTestApp } from './support/test-app.js';

const INT64_EDGES = [-(2n ** 63n), -1n, 0n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n];

describe.each(databaseKinds())('GET /plants on %s', (kind) => {
  const t = useTestApp(kind);

  const caller = async () => plantsClient(t.current, (await t.current.newCaller()).auth);

  it('creates, lists in ascending id order and deletes ids across the whole int64 range exactly', async () => {
    const plants = await caller();
    for (const id of [...INT64_EDGES].reverse()) {
      expect((await plants.create({ id, name: `plant ${id}` })).status).toBe(200);
    }
    const listed = await plants.list();
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual(INT64_EDGES.map((id) => ({ name: `plant ${id}` })));
    // 2^53 and 2^53+1 are distinct rows: deleting one leaves the other.
    expect((await plants.remove(2n ** 53n + 1n)).status).toBe(204);
    expect((await plants.list()).body.map((p: { name: string }) => p.name)).not.toContain(
      `plant ${2n ** 53n + 1n}`,
    );
    expect((await plants.list()).body.map((p: { name: string }) => p.name)).toContain(
      `plant ${2n ** 53n}`,
    );
    for (const id of INT64_EDGES.filter((id) => id !== 2n ** 53n + 1n)) {
      expect((await plants.remove(id)).status, String(id)).toBe(204);
    }
    expect((await plants.list()).body).toEqual([]);
  });

  it('returns no more than limit plants, the first ones by id; limit=0 gives []', async () => {
    const plants = await caller();
    for (const id of [5, 3, 9, 1]) await plants.create({ id, name: `p${id}` });
    expect((await plants.list(2)).body).toEqual([{ name: 'p1' }, { name: 'p3' }]);
    expect((await plants.list(0)).body).toEqual([]);
    expect((await plants.list(2147483647)).body).toHaveLength(4);
    expect((await plants.list()).body).toHaveLength(4);
  });

  it.each([['abc'], ['-1'], ['1.5'], [''], ['2147483648'], ['1e3'], [' 1'], ['0x10']])(
    'answers 400 for limit=%j',
    async (limit) => {
      const plants = await caller();
      expectError(await plants.list(limit), 400, /^limit must be an integer from 0 to 2147483647$/);
    },
  );

  it('answers 400 for a repeated limit and for unknown query parameters', async () => {
    const { auth } = await t.current.newCaller();
    expectError(
      await t.current.http().get('/plants?limit=1&limit=2').set('Authorization', auth),
      400,
      /^limit must be an integer from 0 to 2147483647$/,
    );
    expectError(
      await t.current.http().get('/plants?colour=green').set('Authorization', auth),
      400,
      /colour/,
    );
    for (const name of ['toString', 'hasOwnProperty', '__proto__', 'constructor']) {
      expectError(
        await t.current.http().get(`/plants?${name}=1`).set('Authorization', auth),
        400,
        new RegExp(`property ${name} should not exist`),
      );
    }
  });

  it('sends a list longer than one page as one valid JSON array, in order, with and without limit', async () => {
    const plants = await caller();
    const count = LIST_PAGE_SIZE * 2 + 7;
    const repository = t.current.app.get(PlantsRepository);
    const owner = (await t.current.newCaller()).owner;
    // Inserted through the repository: 2,000 HTTP round trips would only slow the suite.
    const manager = t.current.app.get(DataSource).manager;
    for (let id = count; id >= 1; id--)
      await repository.insert(manager, owner, BigInt(id), `p${id}`, null);
    const client = plantsClient(t.current, `Bearer ${await t.current.tokenFor(owner)}`);
    const all = await client.list();
    expect(all.status).toBe(200);
    expect(all.headers['content-type']).toMatch(/^application\/json/);
    expect(all.body).toHaveLength(count);
    expect(all.body[0]).toEqual({ name: 'p1' });
    expect(all.body[count - 1]).toEqual({ name: `p${count}` });
    expect(all.body.every((p: { name: string }, i: number) => p.name === `p${i + 1}`)).toBe(true);
    const limited = await client.list(LIST_PAGE_SIZE + 3);
    expect(limited.body).toHaveLength(LIST_PAGE_SIZE + 3);
    expect(limited.body[LIST_PAGE_SIZE + 2]).toEqual({ name: `p${LIST_PAGE_SIZE + 3}` });
    const exact = await client.list(LIST_PAGE_SIZE * 2);
    expect(exact.body).toHaveLength(LIST_PAGE_SIZE * 2);
    expect((await plants.list()).body).toEqual([]);
  });
});
