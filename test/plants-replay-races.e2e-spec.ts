import { describe, expect, it } from 'vitest';
import { plantsClient } from './support/plants-client.js';
import { databaseKinds } from './support/test-database.js';
import { useTestApp } from './support/test-app.js';
import { webhooksClient } from './support/webhooks-client.js';

const ROUNDS = 300;

describe.each(databaseKinds())('an exact replay racing a delete of its id on %s', (kind) => {
  // No dispatcher: the events stay in the outbox, where the test counts them.
  const t = useTestApp(kind, { APP_ROLE: 'api' });

  it(`is a 200 in each of ${ROUNDS} rounds, never a 409; a replay that lands after the delete creates the plant again, with its event`, async () => {
    const { auth } = await t.current.newCaller();
    const plants = plantsClient(t.current, auth);
    const { id: subscription } = await webhooksClient(t.current, auth).subscribe(
      'https://receiver.example.com/',
    );
    const plant = { id: 7n, name: 'Ivy', tag: 'vine' };
    let stored = false;
    let creates = 0;
    const statuses = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      if (!stored) {
        expect((await plants.create(plant)).status).toBe(200);
        creates++;
      }
      // The replay's insert finds the row; the delete may commit before its lookup.
      const [replay, removal] = await Promise.all([plants.create(plant), plants.remove(plant.id)]);
      const outcome = `replay ${replay.status}, delete ${removal.status}`;
      statuses.set(outcome, (statuses.get(outcome) ?? 0) + 1);
      if (replay.status === 200) expect(replay.body).toEqual({ name: 'Ivy', tag: 'vine' });
      const after = await plants.get(plant.id);
      expect([200, 404], outcome).toContain(after.status);
      // Still there: the replay ran after the delete, as a create of its own.
      stored = after.status === 200;
      if (stored) creates++;
    }
    // The plant existed when both began: whichever ran first, the delete found it.
    expect(Object.fromEntries(statuses)).toEqual({ 'replay 200, delete 204': ROUNDS });
    // One event per plant stored, none per replay of a stored one.
    const events = await t.current
      .http()
      .get(`/webhooks/${subscription}/deliveries?limit=1000`)
      .set('Authorization', auth);
    expect(events.status).toBe(200);
    expect(events.body).toHaveLength(creates);
    // 1,200 requests: about 12 s on PostgreSQL on a busy two-core machine.
  }, 120_000);
});
