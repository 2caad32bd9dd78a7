import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, type Repository } from 'typeorm';
import { Transactions } from '../database/transactions.js';
import { fairDue } from './fair-due.js';
import type { ClaimRoom } from './fair-share.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';

/** A delivery this instance claimed and now owns until its lease ends. */
export type ClaimedDelivery = Pick<
  WebhookDelivery,
  'id' | 'subscriptionId' | 'payload' | 'attempts' | 'traceParent'
> & { owner: string };

/**
 * The dispatcher's claims on the outbox of webhook deliveries: every
 * instance claims due ones with a lease, so that one instance at a time
 * sends a delivery, and another takes it over only when the lease has
 * expired (its holder died).
 */
@Injectable()
export class DeliveryClaimsRepository {
  private readonly postgres: boolean;

  constructor(
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    private readonly transactions: Transactions,
  ) {
    this.postgres = deliveries.manager.connection.options.type === 'postgres';
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

  /** Gives a claimed delivery back unattempted (shutdown), for any instance to take at once. */
  async releaseClaim(id: string, leaseOwner: string): Promise<void> {
    await this.transactions.write((manager) =>
      manager.update(WebhookDelivery, { id, leaseOwner }, { leaseOwner: null, leaseUntil: null }),
    );
  }

  /** The deliveries waiting to be sent, for the metrics. */
  pendingCount(): Promise<number> {
    return this.deliveries.countBy({ state: 'pending' });
  }
}
