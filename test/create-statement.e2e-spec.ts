import { DataSource } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { RequestScope } from '../src/database/request-scope.js';
import { PLANT_CREATED_EVENTS, type PlantCreatedEvents } from '../src/plants/plant-created.port.js';
import { PlantsRepository } from '../src/plants/plants.repository.js';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';

const squeezed = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/**
 * On PostgreSQL a create is one statement: the plant's insert and, reading
 * its owner from the insert's RETURNING, the outbox's rows; an owner's
 * creates written together are one statement too. Pinned here, so that a
 * change to either shows as a change to this text, with every placeholder
 * where its name says.
 */
describe.skipIf(!databaseKinds().includes('postgres'))('the create statement on postgres', () => {
  const t = useTestApp('postgres');

  it('is one data-modifying CTE whose placeholders follow their names', () => {
    const part = t.current.app
      .get<PlantCreatedEvents>(PLANT_CREATED_EVENTS)
      .statementPart('created');
    const statement = t.current.app.get(PlantsRepository).insertThen(part);
    expect(squeezed(statement!.sql)).toBe(
      squeezed(`WITH "created" AS (
         INSERT INTO "plants" ("owner", "id", "name", "tag") VALUES ($1, $2, $3, $4)
         RETURNING "owner"
       ) INSERT INTO webhook_deliveries (id, subscription_id, payload, state, attempts, next_attempt_at, created_at, trace_parent)
       SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), s.id, $5, 'pending', 0, $6, $6, $7
       FROM webhook_subscriptions s JOIN "created" c ON s.owner = c.owner WHERE s.disabled_at IS NULL`),
    );
  });

  it('writes creates of one owner together as one statement whose placeholders follow their names', () => {
    const part = t.current.app
      .get<PlantCreatedEvents>(PLANT_CREATED_EVENTS)
      .statementPart('created');
    const statement = t.current.app.get(PlantsRepository).insertManyThen(part.many);
    expect(squeezed(statement!.sql)).toBe(
      squeezed(`WITH "input" AS (
         SELECT * FROM unnest(CAST($1 AS bigint[]), CAST($2 AS text[]), CAST($3 AS text[]), CAST($4 AS text[]), CAST($5 AS text[]))
           AS "i" ("id", "name", "tag", "eventPayload", "eventTraceParent")
       ), "inserted" AS (
         INSERT INTO "plants" ("owner", "id", "name", "tag")
         SELECT $6, "id", "name", "tag" FROM "input" ORDER BY "id"
         ON CONFLICT DO NOTHING
         RETURNING "owner", "id"
       ), "created" AS (
         SELECT "n"."owner", "i"."eventPayload", "i"."eventTraceParent"
         FROM "inserted" "n" JOIN "input" "i" ON "i"."id" = "n"."id"
       ), "followed" AS (
         INSERT INTO webhook_deliveries (id, subscription_id, payload, state, attempts, next_attempt_at, created_at, trace_parent)
       SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), s.id, c."eventPayload", 'pending', 0, $7, $7, c."eventTraceParent"
       FROM webhook_subscriptions s JOIN "created" c ON s.owner = c.owner WHERE s.disabled_at IS NULL
         RETURNING 1
       )
       SELECT CAST("id" AS TEXT) AS "id", (SELECT count(*) FROM "followed") AS "followed"
       FROM "inserted"`),
    );
  });
  it('inserts many plants in the order of their ids, so that two such statements over the same ids do not deadlock', async () => {
    const part = t.current.app
      .get<PlantCreatedEvents>(PLANT_CREATED_EVENTS)
      .statementPart('created');
    const statement = t.current.app.get(PlantsRepository).insertManyThen(part.many)!;
    const manager = t.current.app.get(DataSource).manager;
    const ids = Array.from({ length: 64 }, (_, i) => BigInt(i + 1));
    const write = (owner: string, order: bigint[]) => {
      const plants = order.map((id) => ({ id, name: `plant ${id}`, tag: null }));
      const values = plants.map((plant) => part.values(plant, null));
      return statement.run(manager, owner, plants, values, RequestScope.background);
    };
    // In the order given, about one round in three of these deadlocked.
    for (let round = 0; round < 20; round++) {
      const owner = `deadlock-${round}`;
      const [up, down] = await Promise.all([write(owner, ids), write(owner, [...ids].reverse())]);
      expect(up.inserted.size + down.inserted.size).toBe(ids.length);
    }
    // Each id once: a repeated one would be written once and set off events twice.
    await expect(write('repeated', [1n, 2n, 1n])).rejects.toThrow('an id is repeated');
  });
});
