import { Injectable } from '@nestjs/common';
import { LessThan, MoreThanOrEqual, Not } from 'typeorm';
import type { RequestScope } from '../database/request-scope.js';
import { Transactions } from '../database/transactions.js';
import type { PagePosition } from './dto/page.query.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';

/** A delivery as the deliveries list shows it. */
export type DeliveryRow = Pick<
  WebhookDelivery,
  'id' | 'state' | 'attempts' | 'lastStatus' | 'lastError' | 'nextAttemptAt' | 'createdAt'
>;

/** A delivery sent again: due now, its schedule from the start; the last outcome stays until the next attempt. */
const AGAIN = (now: number) => ({
  state: 'pending' as const,
  attempts: 0,
  nextAttemptAt: now,
  finishedAt: null,
  leaseOwner: null,
  leaseUntil: null,
});

/** An owner's view of a subscription's deliveries: the list, a redelivery, a recovery. */
@Injectable()
export class OwnerDeliveriesRepository {
  constructor(private readonly transactions: Transactions) {}

  /** The subscription's latest deliveries, newest first (id breaks ties), before `before` when given (keyset paging). */
  latestOf(
    subscriptionId: string,
    limit: number,
    before: PagePosition | undefined,
    scope: RequestScope,
  ): Promise<DeliveryRow[]> {
    // take: 0 would mean no limit at all.
    if (limit === 0) return Promise.resolve([]);
    return this.transactions.read(
      (manager) =>
        manager.find(WebhookDelivery, {
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
        }),
      scope,
    );
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
    scope: RequestScope,
  ): Promise<'redelivered' | 'pending' | 'unknown'> {
    const affected = await this.transactions.write(async (manager) => {
      const result = await manager.update(
        WebhookDelivery,
        { subscriptionId, id, state: Not('pending') },
        AGAIN(now),
      );
      return result.affected ?? 0;
    }, scope);
    if (affected > 0) return 'redelivered';
    const exists = await this.transactions.read(
      (manager) => manager.existsBy(WebhookDelivery, { subscriptionId, id }),
      scope,
    );
    return exists ? 'pending' : 'unknown';
  }

  /** Makes every failed delivery of the subscription created at or after `since` pending again, due `now`. */
  async recover(
    subscriptionId: string,
    since: number,
    now: number,
    scope: RequestScope,
  ): Promise<number> {
    return this.transactions.write(async (manager) => {
      const result = await manager.update(
        WebhookDelivery,
        { subscriptionId, state: 'failed', createdAt: MoreThanOrEqual(since) },
        AGAIN(now),
      );
      return result.affected ?? 0;
    }, scope);
  }
}
