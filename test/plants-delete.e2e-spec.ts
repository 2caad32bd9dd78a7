import { describe, expect, it } from 'vitest';
import { expectError } from './support/expect-error.js';
import { MALFORMED_PLANT_IDS, plantsClient } from './support/plants-client.js';
import { databaseKinds } from './support/test-database.js';
import { useTestApp } from './support/test-app.js';

describe.each(databaseKinds())('DELETE /plants/{id} on %s', (kind) => {
  const t = useTestApp(kind);

  const caller = async () => plantsClient(t.current, (await t.current.newCaller()).auth);

  it('answers 204 with no body and removes the plant', async () => {
    const plants = await caller();
    await plants.create({ id: 3, name: 'Basil' });
    await plants.create({ id: 4, name: 'Mint' });
    const response = await plants.remove(3);
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(response.headers['content-length'] ?? '0').toBe('0');
    expect((await plants.list()).body).toEqual([{ name: 'Mint' }]);
  });

  it('answers 204 when the client sends Content-Type: application/json with no body', async () => {
    const { auth } = await t.current.newCaller();
    await plantsClient(t.current, auth).create({ id: 6, name: 'Dill' });
    const response = await t.current
      .http()
      .delete('/plants/6')
      .set('Authorization', auth)
      .set('Content-Type', 'application/json');
    expect(response.status, response.text).toBe(204);
  });

  it('answers 404 for an unknown id, and for a plant already deleted', async () => {
    const plants = await caller();
    expectError(await plants.remove(99), 404, /no plant with id 99/);
    await plants.create({ id: 5, name: 'Sage' });
    expect((await plants.remove(5)).status).toBe(204);
    expectError(await plants.remove(5), 404);
  });

  it.each(MALFORMED_PLANT_IDS)('answers 400 for the id %j and deletes nothing', async (id) => {
    const plants = await caller();
    await plants.create({ id: 1, name: 'Thyme' });
    expectError(await plants.remove(id), 400, /^id must be an integer/);
    expect((await plants.list()).body).toEqual([{ name: 'Thyme' }]);
  });

  it('answers 404 for DELETE /plants without an id (an unknown route)', async () => {
    const { auth } = await t.current.newCaller();
    expectError(await t.current.http().delete('/plants').set('Authorization', auth), 404);
  });
});
