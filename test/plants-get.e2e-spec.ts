import { describe, expect, it } from 'vitest';
import { expectError } from './support/expect-error.js';
import { MALFORMED_PLANT_IDS, plantsClient } from './support/plants-client.js';
import { databaseKinds } from './support/test-database.js';
import { useTestApp } from './support/test-app.js';

describe.each(databaseKinds())('GET /plants/{id} on %s', (kind) => {
  const t = useTestApp(kind);

  const caller = async () => plantsClient(t.current, (await t.current.newCaller()).auth);

  it('answers 200 with the Plant for every id of int64 exactly, tag left out when none', async () => {
    const plants = await caller();
    const ids = [-(2n ** 63n), 0n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n];
    for (const id of ids) await plants.create({ id, name: `plant ${id}`, tag: `t${id}` });
    await plants.create({ id: 7, name: 'Fern' });
    for (const id of ids) {
      const response = await plants.get(id);
      expect(response.status, String(id)).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.body).toEqual({ name: `plant ${id}`, tag: `t${id}` });
    }
    // 2^53+1 is not read as its rounded neighbour.
    expect((await plants.get(2n ** 53n + 1n)).body.name).toBe(`plant ${2n ** 53n + 1n}`);
    const untagged = await plants.get(7);
    expect(untagged.body).toEqual({ name: 'Fern' });
    expect(untagged.text).not.toContain('tag');
  });

  it("answers 404 for an unknown id, a deleted plant and another owner's plant", async () => {
    const alice = await caller();
    const bob = await caller();
    expectError(await alice.get(99), 404, /no plant with id 99/);
    await alice.create({ id: 5, name: 'Sage' });
    expectError(await bob.get(5), 404, /^no plant with id 5$/);
    expect((await alice.get(5)).status).toBe(200);
    expect((await alice.remove(5)).status).toBe(204);
    expectError(await alice.get(5), 404);
  });

  it.each(MALFORMED_PLANT_IDS)('answers 400 for the id %j, as DELETE does', async (id) => {
    const plants = await caller();
    expectError(await plants.get(id), 400, /^id must be an integer/);
  });

  it('answers 401 without a token', async () => {
    expectError(await t.current.http().get('/plants/1'), 401);
  });
});
