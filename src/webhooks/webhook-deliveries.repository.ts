import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, In, LessThan, MoreThanOrEqual, Not, type Repository } from 'typeorm';
import { CompiledQuery, slots } from '../database/compiled-query.js';
import { Transactions } from '../database/transactions.js';
import { WriteBatch } from '../database/write-batch.js';
import type { ClaimRoom } from './fair-share.js';
import type { PagePosition } from './dto/page.query.js';
import { type DeliveryState, WebhookDelivery } from './webhook-delivery.entity.js';

/** A delivery as the deliveries list shows it. */
export type DeliveryRow = Pick<
  WebhookDelivery,
  'id' | 'state' | 'attempts' | 'lastStatus' | 'lastError' | 'nextAttemptAt' | 'createdAt'
>;

/** A delivery this instance claimed and now owns until its lease ends. */
export type ClaimedDelivery = Pick<
  WebhookDelivery,
  'id' | 'subscriptionId' | 'payload' | 'attempts' | 'traceParent'
> & { owner: string };

/** The length of webhook_deliveries.last_error, in characters. */
const LAST_ERROR_LENGTH = 300;

/**
 * An attempt's error text as the column can hold it, whatever the receiver or
 * the network said: at most LAST_ERROR_LENGTH characters (a longer one failed
 * the UPDATE on PostgreSQL and left the delivery claimed again and again),
 * without NUL (which PostgreSQL refuses in text) or a surrogate cut in half.
 */
export function storableError(text: string | null): string | null {
  if (text === null) return null;
  const clean = text.replaceAll('\0', '');
  if (clean.length <= LAST_ERROR_LENGTH) return clean;
  const cut = clean.slice(0, LAST_ERROR_LENGTH - 1);
  // A high surrogate left at the end would be half a character.
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

/** How one attempt ended, as recorded. */
export interface AttemptRecord {
  state: DeliveryState;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: number | null;
}

/** A delivery sent again: due now, its schedule from the start; the last outcome stays until the next attempt. */
const AGAIN = (now: number) => ({
  state: 'pending' as const,
  attempts: 0,
  nextAttemptAt: now,
  finishedAt: null,
  leaseOwner: null,
  leaseUntil: null,
});

/** The values of one attempt's UPDATE. */
type RecordSlot =
  | 'id'
  | 'leaseOwner'
  | 'state'
  | 'attempts'
  | 'lastStatus'
  | 'lastError'
  | 'nextAttemptAt'
  | 'finishedAt';

/** The placeholders of enqueueForCreatedSql. */
export type EventSlot = 'eventPayload' | 'eventNow' | 'eventTraceParent';

/** The event id: `msg_` and 32 random hex digits, made by the database for each row of the outbox write. */
const EVENT_ID = {
  postgres: `'msg_' || replace(gen_random_uuid()::text, '-', '')`,
  sqlite: `'msg_' || lower(hex(randomblob(16)))`,
};

/** The most due rows one claim ranks, whatever the backlog. */
const MOST_RANKED = 1024;

/**
 * The ids of up to `limit` due deliveries that `room` lets this instance start
 * (SQL for an `IN (…)`, and its parameters; `:now` is the caller's), the same
 * on both databases: due rows of subscriptions and owners below their cap,
 * the oldest due first (a bounded number of them), then, by window ranks, at
 * most the subscription's room of each subscription's rows and the owner's
 * room of what is left of each owner's. One statement whatever the number of
 * subscriptions. The counts in flight are this instance's (the dispatcher's):
 * each instance has caps of its own. Rows of a subscription or owner at its
 * cap are filtered out before the ranking, so a hanging receiver's backlog
 * takes no ranked place (the index scan still reads past it).
 */
function fairDue(
  room: ClaimRoom,
  limit: number,
): { sql: string; parameters: Record<string, unknown> } {
  const parameters: Record<string, unknown> = {
    ranked: Math.min(limit * room.perSubscription, MOST_RANKED),
    limit,
  };
  const exclusions: string[] = [];
  /** SQL for `cap` minus what is in flight for `column`'s value; the values at their cap left out. */
  const roomOf = (
    column: string,
    inFlight: ReadonlyMap<string, number>,
    cap: number,
    key: string,
  ) => {
    const full = [...inFlight].filter(([, count]) => count >= cap).map(([name]) => name);
    if (full.length > 0) {
      parameters[`${key}Full`] = full;
      exclusions.push(`AND ${column} NOT IN (:...${key}Full)`);
    }
    const partly = [...inFlight].filter(([, count]) => count < cap);
    const cases = partly.map(([name, count], index) => {
      parameters[`${key}${index}`] = name;
      parameters[`${key}${index}n`] = count;
      return `WHEN :${key}${index} THEN CAST(:${key}${index}n AS integer)`;
    });
    const busy = cases.length > 0 ? `CASE ${column} ${cases.join(' ')} ELSE 0 END` : '0';
    parameters[`${key}Cap`] = cap;
    return `CAST(:${key}Cap AS integer) - ${busy}`;
  };
  const subscriptionRoom = roomOf(
    'd.subscription_id',
    room.subscriptions,
    room.perSubscription,
    'subscription',
  );
  const ownerRoom = roomOf('s.owner', room.owners, room.perOwner, 'owner');
  const sql = `SELECT byOwner.id FROM (
      SELECT bySubscription.id, bySubscription.owner_room,
        ROW_NUMBER() OVER (PARTITION BY bySubscription.owner ORDER BY bySubscription.next_attempt_at, bySubscription.id) AS owner_rank
      FROM (
        SELECT candidate.*,
          ROW_NUMBER() OVER (PARTITION BY candidate.subscription_id ORDER BY candidate.next_attempt_at, candidate.id) AS subscription_rank
        FROM (
          SELECT d.id, d.subscription_id, s.owner, d.next_attempt_at,
            ${subscriptionRoom} AS subscription_room, ${ownerRoom} AS owner_room
          FROM webhook_deliveries d INNER JOIN webhook_subscriptions s ON s.id = d.subscription_id
          WHERE d.state = 'pending' AND d.next_attempt_at <= :now
            AND (d.lease_until IS NULL OR d.lease_until < :now) ${exclusions.join(' ')}
          ORDER BY d.next_attempt_at, d.id
          LIMIT :ranked
        ) candidate
      ) bySubscription
      WHERE bySubscription.subscription_rank <= bySubscription.subscription_room
    ) byOwner
    WHERE byOwner.owner_rank <= byOwner.owner_room
    ORDER BY byOwner.owner_rank
    LIMIT :limit`;
  return { sql, parameters };
}

/**
 * The outbox of webhook deliveries, through a TypeORM
 * `Repository<WebhookDelivery>`. The create path stores rows (through
 * PlantCreatedOutbox, in its transaction); every instance's dispatcher claims
 * due ones with a lease, so that one instance at a time sends a delivery, and
 * another takes it over only when the lease has expired (its holder died).
 * What runs per create or per attempt is SQL generated once (compiled-query.ts).
 */
@Injectable()
export class WebhookDeliveriesRepository {
  private readonly postgres: boolean;
  private readonly enqueueOfOwner: CompiledQuery<'owner' | 'payload' | 'now' | 'traceParent'>;
  private readonly record: CompiledQuery<RecordSlot>;
  /** Attempts recorded together on SQLite (see recordAttempt). */
  private readonly attempts: WriteBatch<Record<RecordSlot, unknown>, boolean>;

  constructor(
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    private readonly transactions: Transactions,
  ) {
    const dataSource = deliveries.manager.connection;
    this.postgres = dataSource.options.type === 'postgres';
    // INSERT … SELECT, which TypeORM's InsertQueryBuilder cannot write: one
    // statement whatever the number of subscriptions, rather than reading
    // them first and writing their rows second.
    this.enqueueOfOwner = CompiledQuery.fromSql(
      dataSource,
      `INSERT INTO webhook_deliveries (id, subscription_id, payload, state, attempts, next_attempt_at, created_at, trace_parent)
       SELECT ${EVENT_ID[this.postgres ? 'postgres' : 'sqlite']}, s.id, :payload, 'pending', 0, :now, :now, :traceParent
       FROM webhook_subscriptions s WHERE s.owner = :owner AND s.disabled_at IS NULL`,
      ['owner', 'payload', 'now', 'traceParent'],
    );
    this.record = CompiledQuery.build(
      deliveries
        .createQueryBuilder()
        .update()
        .set({
          ...slots('state', 'attempts', 'lastStatus', 'lastError', 'nextAttemptAt', 'finishedAt'),
          // Raw SQL: a null here would be a parameter of its own.
          leaseOwner: () => 'NULL',
          leaseUntil: () => 'NULL',
        })
        .where(
          `id = :id AND lease_owner = :leaseOwner AND state = 'pending'`,
          slots('id', 'leaseOwner'),
        ),
    );
    this.attempts = new WriteBatch(
      (batch) =>
        this.transactions.runUnsynced(async (manager) => {
          const results: boolean[] = [];
          for (const values of batch) results.push(await this.held(manager, values));
          return results;
        }),
      (values) => this.transactions.runUnsynced((manager) => this.held(manager, values)),
    );
  }

  /** Records one attempt on `manager`; whether this instance still held the delivery. */
  private async held(
    manager: EntityManager,
    values: Record<RecordSlot, unknown>,
  ): Promise<boolean> {
    return (await this.record.affected(manager, values)) > 0;
  }

  /**
   * On PostgreSQL, the part of a one-statement create that stores its
   * deliveries (a data-modifying CTE's body): one pending delivery of
   * `:eventPayload` per active subscription of the owners the CTE `created`
   * returns, so none when the plant was not inserted. Its placeholders are
   * named apart from the statement's others.
   */
  enqueueForCreatedSql(created: string): { sql: string; names: readonly EventSlot[] } {
    return {
      sql: `INSERT INTO webhook_deliveries (id, subscription_id, payload, state, attempts, next_attempt_at, created_at, trace_parent)
       SELECT ${EVENT_ID.postgres}, s.id, :eventPayload, 'pending', 0, :eventNow, :eventNow, :eventTraceParent
       FROM webhook_subscriptions s JOIN "${created}" c ON s.owner = c.owner WHERE s.disabled_at IS NULL
       RETURNING 1`,
      names: ['eventPayload', 'eventNow', 'eventTraceParent'],
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

  /**
   * Claims up to `limit` due deliveries for `leaseOwner` until `leaseUntil`,
   * no more than `room` lets this instance start (fairDue): a delivery held
   * back stays unleased, for another instance or a later pass.
   * On PostgreSQL in one statement, an UPDATE of the rows a subquery locks
   * FOR UPDATE SKIP LOCKED: instances claim side by side without waiting on
   * each other's rows. SQLite has one writer at a time, and TypeORM writes no
   * RETURNING for it: a transaction reads the due rows, then leases them (the
   * transaction's snapshot keeps another process from claiming in between:
   * its write would make this one fail as busy, to be tried again).
   */
  async claim(
    leaseOwner: string,
    now: number,
    leaseUntil: number,
    limit: number,
    room: ClaimRoom,
  ): Promise<ClaimedDelivery[]> {
    const fair = fairDue(room, limit);
    const parameters = { ...fair.parameters, now };
    if (this.postgres) {
      const locked = this.deliveries
        .createQueryBuilder('due')
        .select('due.id')
        .where(`due.id IN (${fair.sql})`)
        // Checked again on the locked row: another instance may have claimed it meanwhile.
        .andWhere(`due.state = 'pending' AND (due.lease_until IS NULL OR due.lease_until < :now)`)
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked');
      const result = await this.deliveries
        .createQueryBuilder()
        .update()
        .set({ leaseOwner, leaseUntil })
        .where(`id IN (${locked.getQuery()})`)
        .setParameters(parameters)
        .returning(
          `id, subscription_id AS "subscriptionId", payload, attempts, trace_parent AS "traceParent", ` +
            `(SELECT s.owner FROM webhook_subscriptions s WHERE s.id = subscription_id) AS owner`,
        )
        .execute();
      return result.raw as ClaimedDelivery[];
    }
    return this.transactions.runUnsynced(async (manager) => {
      const claimed = await manager
        .createQueryBuilder(WebhookDelivery, 'd')
        .innerJoin('d.subscription', 's')
        .select('d.id', 'id')
        .addSelect('d.subscriptionId', 'subscriptionId')
        .addSelect('d.payload', 'payload')
        .addSelect('d.attempts', 'attempts')
        .addSelect('d.traceParent', 'traceParent')
        .addSelect('s.owner', 'owner')
        .where(`d.id IN (${fair.sql})`)
        .setParameters(parameters)
        .getRawMany<ClaimedDelivery>();
      if (claimed.length === 0) return [];
      await manager.update(
        WebhookDelivery,
        { id: In(claimed.map((delivery) => delivery.id)) },
        { leaseOwner, leaseUntil },
      );
      return claimed;
    });
  }

  /**
   * Records an attempt of a delivery this instance holds; false when it no
   * longer holds it (its lease expired and another instance took over).
   * On SQLite, attempts that end meanwhile are recorded together, one UPDATE
   * each in one unsynced transaction (Transactions.runUnsynced): one commit on
   * the event loop for a batch of deliveries rather than one fsync'ed commit
   * per delivery. Each UPDATE still checks its own lease. On PostgreSQL each
   * is one statement of its own, on a pooled connection, side by side.
   */
  recordAttempt(
    id: string,
    leaseOwner: string,
    attempts: number,
    outcome: AttemptRecord,
  ): Promise<boolean> {
    const values = {
      ...outcome,
      lastError: storableError(outcome.lastError),
      finishedAt: outcome.state === 'pending' ? null : Date.now(),
      id,
      leaseOwner,
      attempts,
    };
    if (this.postgres) return this.transactions.write((manager) => this.held(manager, values));
    return this.attempts.add(values);
  }

  /** Gives a claimed delivery back unattempted (shutdown), for any instance to take at once. */
  async releaseClaim(id: string, leaseOwner: string): Promise<void> {
    await this.transactions.write((manager) =>
      manager.update(WebhookDelivery, { id, leaseOwner }, { leaseOwner: null, leaseUntil: null }),
    );
  }

  /**
   * Marks the subscription's pending deliveries failed with `reason`, all but
   * `keep` (the one whose attempt the caller records), on `manager` (the
   * transaction that disables the subscription).
   */
  async dropPending(
    manager: EntityManager,
    subscriptionId: string,
    keep: string,
    reason: string,
  ): Promise<void> {
    await manager.update(
      WebhookDelivery,
      { subscriptionId, state: 'pending', id: Not(keep) },
      {
        state: 'failed',
        nextAttemptAt: null,
        finishedAt: Date.now(),
        leaseOwner: null,
        leaseUntil: null,
        lastError: reason,
      },
    );
  }

  /** The subscription's latest deliveries, newest first (id breaks ties), before `before` when given (keyset paging). */
  latestOf(subscriptionId: string, limit: number, before?: PagePosition): Promise<DeliveryRow[]> {
    // take: 0 would mean no limit at all.
    if (limit === 0) return Promise.resolve([]);
    return this.deliveries.find({
      select: {
        id: true,
        state: true,
        attempts: true,
        lastStatus: true,
        lastError: true,
        nextAttemptAt: true,
        createdAt: true,
      },
      where: before
        ? [
            { subscriptionId, createdAt: LessThan(before.createdAt) },
            { subscriptionId, createdAt: before.createdAt, id: LessThan(before.id) },
          ]
        : { subscriptionId },
      order: { createdAt: 'DESC', id: 'DESC' },
      take: limit,
    });
  }

  /**
   * Makes the subscription's delivery `id` pending again, due `now`, with a
   * fresh schedule (attempts back to 0) and the same event id; unless it is
   * pending already. Returns whether it did, or what the delivery is.
   */
  async redeliver(
    subscriptionId: string,
    id: string,
    now: number,
  ): Promise<'redelivered' | 'pending' | 'unknown'> {
    const affected = await this.transactions.write(async (manager) => {
      const result = await manager.update(
        WebhookDelivery,
        { subscriptionId, id, state: Not('pending') },
        AGAIN(now),
      );
      return result.affected ?? 0;
    });
    if (affected > 0) return 'redelivered';
    return (await this.deliveries.existsBy({ subscriptionId, id })) ? 'pending' : 'unknown';
  }

  /** Makes every failed delivery of the subscription created at or after `since` pending again, due `now`. */
  async recover(subscriptionId: string, since: number, now: number): Promise<number> {
    return this.transactions.write(async (manager) => {
      const result = await manager.update(
        WebhookDelivery,
        { subscriptionId, state: 'failed', createdAt: MoreThanOrEqual(since) },
        AGAIN(now),
      );
      return result.affected ?? 0;
    });
  }

  /**
   * Deletes up to `batch` deliveries that finished (delivered or failed)
   * before `cutoff`, in one statement; returns how many. A row an older
   * instance finished has no finish time and counts from its creation (which
   * is earlier). A pending row never goes: the condition is repeated outside
   * the subquery, so a delivery sent again meanwhile (pending once more) stays.
   */
  async deleteFinishedBefore(cutoff: number, batch: number): Promise<number> {
    const finished = `state IN ('delivered', 'failed') AND (finished_at < :cutoff OR (finished_at IS NULL AND created_at < :cutoff))`;
    const old = this.deliveries
      .createQueryBuilder('old')
      .select('old.id')
      // Unqualified columns name the subquery's own rows.
      .where(finished)
      .limit(batch);
    return this.transactions.write(async (manager) => {
      const result = await manager
        .createQueryBuilder()
        .delete()
        .from(WebhookDelivery)
        .where(`id IN (${old.getQuery()})`)
        .andWhere(finished)
        .setParameters({ cutoff })
        .execute();
      return result.affected ?? 0;
    });
  }

  pendingCount(): Promise<number> {
    return this.deliveries.countBy({ state: 'pending' });
  }
}
