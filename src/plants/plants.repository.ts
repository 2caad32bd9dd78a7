import { Injectable } from '@nestjs/common';
import { SqlStatements, type Statement } from '../database/sql-statements.js';
import { currentTraceparent } from '../tracing/trace-hooks.js';

/** A plant as a list shows it. */
export interface PlantRow {
  name: string;
  tag: string | null;
}

export interface StoredPlant extends PlantRow {
  /** The id as a decimal string: exact for all of int64 on both databases. */
  id: string;
}

// Qualified: in ORDER BY a bare `id` would name the text alias and sort ids as strings.
const SELECT = 'SELECT CAST(p.id AS TEXT) AS id, p.name, p.tag FROM plants p';

/**
 * Owner-scoped queries on the plants table (see plant.entity.ts), as
 * prepared statements (see sql-statements.ts for why not the query builder).
 * Ids go in as bigints and come out through CAST(id AS TEXT): better-sqlite3
 * would read a bigint column into a JS number and round every id above 2^53.
 * Every query walks the (owner, id) primary key: a list of 20 costs the same
 * over 200 or 1,000,000 plants.
 */
@Injectable()
export class PlantsRepository {
  private readonly insertOne: Statement<never>;
  private readonly insertEvents: Statement<never>;
  private readonly insertWithEvents: Statement<never>;
  private readonly findOneById: Statement<StoredPlant>;
  private readonly firstRows: Statement<PlantRow>;
  private readonly firstPage: Statement<StoredPlant>;
  private readonly pageAfter: Statement<StoredPlant>;
  private readonly deleteOne: Statement<never>;

  constructor(private readonly statements: SqlStatements) {
    this.insertOne = statements.prepare(
      'plants_insert',
      'INSERT INTO plants (owner, id, name, tag) VALUES (?, ?, ?, ?)',
    );
    // The outbox write: one pending delivery per active subscription of the
    // owner (see src/webhooks/). Without subscriptions it costs one index
    // lookup on webhook_subscriptions(owner). On PostgreSQL plant and events
    // are one statement (a data-modifying CTE: one round trip); on SQLite two
    // statements in one synchronous transaction.
    this.insertEvents = statements.prepare(
      'plants_insert_events',
      `INSERT INTO webhook_deliveries (id, subscription_id, payload, state, attempts, next_attempt_at, created_at, trace_parent)
       SELECT 'msg_' || lower(hex(randomblob(16))), s.id, ?, 'pending', 0, ?, ?, ?
       FROM webhook_subscriptions s WHERE s.owner = ? AND s.disabled_at IS NULL`,
    );
    this.insertWithEvents = statements.prepare(
      'plants_insert_with_events',
      `WITH p AS (INSERT INTO plants (owner, id, name, tag) VALUES (?, ?, ?, ?) RETURNING owner)
       INSERT INTO webhook_deliveries (id, subscription_id, payload, state, attempts, next_attempt_at, created_at, trace_parent)
       SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), s.id, ?, 'pending', 0, ?, ?, ?
       FROM webhook_subscriptions s JOIN p ON s.owner = p.owner WHERE s.disabled_at IS NULL`,
    );
    this.findOneById = statements.prepare(
      'plants_find',
      `${SELECT} WHERE p.owner = ? AND p.id = ?`,
    );
    this.firstRows = statements.prepare(
      'plants_first_rows',
      'SELECT p.name, p.tag FROM plants p WHERE p.owner = ? ORDER BY p.id LIMIT ?',
    );
    this.firstPage = statements.prepare(
      'plants_page',
      `${SELECT} WHERE p.owner = ? ORDER BY p.id LIMIT ?`,
    );
    this.pageAfter = statements.prepare(
      'plants_page_after',
      `${SELECT} WHERE p.owner = ? AND p.id > ? ORDER BY p.id LIMIT ?`,
    );
    this.deleteOne = statements.prepare(
      'plants_delete',
      'DELETE FROM plants WHERE owner = ? AND id = ?',
    );
  }

  /**
   * Inserts a plant and, in the same transaction, one plant-created event per
   * active subscription of its owner, whose body is `event`. Returns how many
   * events were stored. A plant with the same owner and id makes it throw a
   * unique violation, and then no event is stored.
   */
  async insert(
    owner: string,
    id: bigint,
    name: string,
    tag: string | null,
    event: string,
  ): Promise<number> {
    const now = Date.now();
    // The create's trace, for the deliveries' spans to link to (none with tracing off).
    const traceparent = currentTraceparent() ?? null;
    if (this.statements.dialect === 'postgres') {
      return this.insertWithEvents.run([owner, id, name, tag, event, now, now, traceparent]);
    }
    const [, events] = await this.statements.transaction([
      [this.insertOne, [owner, id, name, tag]],
      [this.insertEvents, [event, now, now, traceparent, owner]],
    ]);
    return events;
  }

  async findOne(owner: string, id: bigint): Promise<StoredPlant | undefined> {
    const [plant] = await this.findOneById.all([owner, id]);
    return plant;
  }

  /**
   * The owner's first plants in ascending id order, without their ids: for a
   * list that fits in one page, which needs no id to go on from. Leaving out
   * CAST(id AS TEXT) makes a 20-row query about a third cheaper on SQLite.
   */
  head(owner: string, limit: number): Promise<PlantRow[]> {
    return this.firstRows.all([owner, limit]);
  }

  /** One page of the owner's plants in ascending id order, after `afterId` when given (keyset paging). */
  page(owner: string, size: number, afterId?: string): Promise<StoredPlant[]> {
    return afterId === undefined
      ? this.firstPage.all([owner, size])
      : this.pageAfter.all([owner, BigInt(afterId), size]);
  }

  /** Deletes the owner's plant; false when the owner has no plant with that id. */
  async delete(owner: string, id: bigint): Promise<boolean> {
    return (await this.deleteOne.run([owner, id])) > 0;
  }
}
