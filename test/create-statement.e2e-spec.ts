import { describe, expect, it } from 'vitest';
import { PLANT_CREATED_EVENTS, type PlantCreatedEvents } from '../src/plants/plant-created.port.js';
import { PlantsRepository } from '../src/plants/plants.repository.js';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';

const squeezed = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/**
 * On PostgreSQL a create is one statement: the plant's insert and, reading
 * its owner from the insert's RETURNING, the outbox's rows. Pinned here, so
 * that a change to it shows as a change to this text, with every placeholder
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
});
