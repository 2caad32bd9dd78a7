import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import { CompiledQuery } from '../database/compiled-query.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';

/** The placeholders of enqueueForCreatedSql. */
export type EventSlot = 'eventPayload' | 'eventNow' | 'eventTraceParent';

/** The event id: `msg_` and 32 random hex digits, made by the database for each row of the outbox write. */
const EVENT_ID = {
  postgres: `'msg_' || replace(gen_random_uuid()::text, '-', '')`,
  sqlite: `'msg_' || lower(hex(randomblob(16)))`,
};

/**
 * The outbox write of a create: its pending deliveries, in the create's own
 * transaction (SQLite) or statement (PostgreSQL), through PlantCreatedOutbox.
 */
@Injectable()
export class WebhookOutboxRepository {
  private readonly enqueueOfOwner: CompiledQuery<'owner' | 'payload' | 'now' | 'traceParent'>;

  constructor(@InjectRepository(WebhookDelivery) deliveries: Repository<WebhookDelivery>) {
    const dataSource = deliveries.manager.connection;
    const postgres = dataSource.options.type === 'postgres';
    // INSERT … SELECT, which TypeORM's InsertQueryBuilder cannot write: one
    // statement whatever the number of subscriptions, rather than reading
    // them first and writing their rows second.
    this.enqueueOfOwner = CompiledQuery.fromSql(
      dataSource,
      `INSERT INTO webhook_deliveries (id, subscription_id, payload, state, attempts, next_attempt_at, created_at, trace_parent)
       SELECT ${EVENT_ID[postgres ? 'postgres' : 'sqlite']}, s.id, :payload, 'pending', 0, :now, :now, :traceParent
       FROM webhook_subscriptions s WHERE s.owner = :owner AND s.disabled_at IS NULL`,
      ['owner', 'payload', 'now', 'traceParent'],
    );
  }

  /**
   * On PostgreSQL, the part of a one-statement create that stores its
   * deliveries (the command after the create's data-modifying CTE): one
   * pending delivery of `:eventPayload` per active subscription of the owners
   * the CTE `created` returns; its row count is how many. Its placeholders
   * are named apart from the statement's others.
   */
  enqueueForCreatedSql(created: string): { sql: string; names: readonly EventSlot[] } {
    return {
      sql: enqueueForCreated(created, ':eventPayload', ':eventTraceParent'),
      names: ['eventPayload', 'eventNow', 'eventTraceParent'],
    };
  }

  /**
   * The same for many plants in one statement: each row of `created` carries
   * its plant's payload and trace parent as the columns `eventPayload` and
   * `eventTraceParent`; `:eventNow` is shared.
   */
  enqueueForManyCreatedSql(created: string): {
    sql: string;
    names: readonly EventSlot[];
    perPlant: readonly EventSlot[];
  } {
    return {
      sql: enqueueForCreated(created, 'c."eventPayload"', 'c."eventTraceParent"'),
      names: ['eventNow'],
      perPlant: ['eventPayload', 'eventTraceParent'],
    };
  }

  /**
   * Stores one pending delivery of `payload`, due at once, for each active
   * subscription of `owner`, on `manager` (the create's transaction): the
   * subscriptions that exist when the create commits. Returns how many.
   */
  enqueueForOwner(
    manager: EntityManager,
    owner: string,
    payload: string,
    now: number,
    traceParent: string | null,
  ): Promise<number> {
    return this.enqueueOfOwner.affected(manager, { owner, payload, now, traceParent });
  }
}

/** The deliveries of the owners of `created`'s rows, with the payload and trace parent given as SQL. */
function enqueueForCreated(created: string, payload: string, traceParent: string): string {
  return `INSERT INTO webhook_deliveries (id, subscription_id, payload, state, attempts, next_attempt_at, created_at, trace_parent)
       SELECT ${EVENT_ID.postgres}, s.id, ${payload}, 'pending', 0, :eventNow, :eventNow, ${traceParent}
       FROM webhook_subscriptions s JOIN "${created}" c ON s.owner = c.owner WHERE s.disabled_at IS NULL`;
}
