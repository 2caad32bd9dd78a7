import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, In, Not, type Repository } from 'typeorm';
import { Transactions } from '../database/transactions.js';
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
>;

/** A new pending delivery, as the create's outbox write stores it. */
export type NewDelivery = Pick<
  WebhookDelivery,
  'id' | 'subscriptionId' | 'payload' | 'createdAt' | 'traceParent'
>;

/** How one attempt ended, as recorded. */
export interface AttemptRecord {
  state: DeliveryState;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: number | null;
}

/**
 * The outbox of webhook deliveries, through a TypeORM
 * `Repository<WebhookDelivery>`. The create path stores rows (through
 * PlantCreatedOutbox, in its transaction); every instance's dispatcher claims
 * due ones with a lease, so that one instance at a time sends a delivery, and
 * another takes it over only when the lease has expired (its holder died).
 */
@Injectable()
export class WebhookDeliveriesRepository {
  private readonly postgres: boolean;

  constructor(
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    private readonly transactions: Transactions,
  ) {
    this.postgres = deliveries.manager.connection.options.type === 'postgres';
  }

  /** Stores pending deliveries, due at once, on `manager` (the create's transaction). */
  async enqueue(manager: EntityManager, rows: NewDelivery[]): Promise<void> {
    await manager
      .createQueryBuilder()
      .insert()
      .into(WebhookDelivery)
      .values(
        rows.map((row) => ({
          ...row,
          state: 'pending' as const,
          attempts: 0,
          nextAttemptAt: row.createdAt,
        })),
      )
      // Nothing to read back: every column is given.
      .updateEntity(false)
      .execute();
  }

  /**
   * Claims up to `limit` due deliveries for `leaseOwner` until `leaseUntil`.
   * On PostgreSQL, FOR UPDATE SKIP LOCKED lets instances claim side by side
   * without waiting on each other's rows. SQLite has one writer at a time:
   * the transaction's snapshot keeps another process from claiming between
   * the two statements (its write would make this one fail as busy).
   */
  claim(
    leaseOwner: string,
    now: number,
    leaseUntil: number,
    limit: number,
  ): Promise<ClaimedDelivery[]> {
    return this.transactions.run(async (manager) => {
      const due = manager
        .createQueryBuilder(WebhookDelivery, 'd')
        .select(['d.id', 'd.subscriptionId', 'd.payload', 'd.attempts', 'd.traceParent'])
        .where(`d.state = 'pending' AND d.nextAttemptAt <= :now`, { now })
        .andWhere('(d.leaseUntil IS NULL OR d.leaseUntil < :now)', { now })
        .orderBy('d.nextAttemptAt')
        .limit(limit);
      if (this.postgres) due.setLock('pessimistic_write').setOnLocked('skip_locked');
      const claimed = await due.getMany();
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
   */
  async recordAttempt(
    id: string,
    leaseOwner: string,
    attempts: number,
    outcome: AttemptRecord,
  ): Promise<boolean> {
    const result = await this.transactions.write((manager) =>
      manager.update(
        WebhookDelivery,
        { id, leaseOwner, state: 'pending' },
        { ...outcome, attempts, leaseOwner: null, leaseUntil: null },
      ),
    );
    return (result.affected ?? 0) > 0;
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
        leaseOwner: null,
        leaseUntil: null,
        lastError: reason,
      },
    );
  }

  /** The subscription's latest deliveries, newest first. */
  latestOf(subscriptionId: string, limit: number): Promise<DeliveryRow[]> {
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
      where: { subscriptionId },
      order: { createdAt: 'DESC', id: 'DESC' },
      take: limit,
    });
  }

  pendingCount(): Promise<number> {
    return this.deliveries.countBy({ state: 'pending' });
  }
}
