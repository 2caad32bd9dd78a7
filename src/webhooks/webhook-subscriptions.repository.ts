import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, IsNull, MoreThan, type Repository } from 'typeorm';
import { CompiledQuery, slots } from '../database/compiled-query.js';
import { Transactions } from '../database/transactions.js';
import type { PagePosition } from './dto/page.query.js';
import { WebhookSubscription } from './webhook-subscription.entity.js';

/** A subscription as its owner sees it: everything but the secret. */
export type SubscriptionRow = Pick<
  WebhookSubscription,
  'id' | 'url' | 'description' | 'createdAt' | 'disabledAt'
>;

/** What the dispatcher needs to send to a subscription. */
export type SubscriptionTarget = Pick<WebhookSubscription, 'url' | 'secret' | 'disabledAt'>;

const VISIBLE = { id: true, url: true, description: true, createdAt: true, disabledAt: true };

/** Owner-scoped queries on webhook_subscriptions, through a TypeORM `Repository<WebhookSubscription>`. */
@Injectable()
export class WebhookSubscriptionsRepository {
  /** Per delivery attempt: SQL generated once, see compiled-query.ts. */
  private readonly targetOf: CompiledQuery<'id'>;

  constructor(
    @InjectRepository(WebhookSubscription)
    private readonly subscriptions: Repository<WebhookSubscription>,
    private readonly transactions: Transactions,
  ) {
    this.targetOf = CompiledQuery.build(
      subscriptions
        .createQueryBuilder('s')
        .select('s.url', 'url')
        .addSelect('s.secret', 'secret')
        .addSelect('s.disabled_at', 'disabledAt')
        .where('s.id = :id', slots('id')),
    );
  }

  async insert(subscription: WebhookSubscription): Promise<void> {
    await this.transactions.write((manager) => manager.insert(WebhookSubscription, subscription));
  }

  /**
   * The owner's subscriptions, oldest first (id breaks ties), after `after`
   * when given (keyset paging), at most `take` of them when given.
   */
  list(
    owner: string,
    { take, after }: { take?: number; after?: PagePosition } = {},
  ): Promise<SubscriptionRow[]> {
    return this.subscriptions.find({
      select: VISIBLE,
      where: after
        ? [
            { owner, createdAt: MoreThan(after.createdAt) },
            { owner, createdAt: after.createdAt, id: MoreThan(after.id) },
          ]
        : { owner },
      order: { createdAt: 'ASC', id: 'ASC' },
      take,
    });
  }

  findOwned(owner: string, id: string): Promise<SubscriptionRow | null> {
    return this.subscriptions.findOne({ select: VISIBLE, where: { owner, id } });
  }

  /** Deletes the owner's subscription; its deliveries go with it (ON DELETE CASCADE). */
  async delete(owner: string, id: string): Promise<boolean> {
    const result = await this.transactions.write((manager) =>
      manager.delete(WebhookSubscription, { owner, id }),
    );
    return (result.affected ?? 0) > 0;
  }

  async target(id: string): Promise<SubscriptionTarget | undefined> {
    const [row] = await this.targetOf.rows<{
      url: string;
      secret: string;
      disabledAt: number | string | null;
    }>(this.subscriptions.manager, { id });
    if (!row) return undefined;
    // Raw rows are not hydrated: PostgreSQL returns the bigint as text.
    return { ...row, disabledAt: row.disabledAt === null ? null : Number(row.disabledAt) };
  }

  /** Marks the subscription disabled, on `manager` (a transaction that also drops its deliveries). */
  async disable(manager: EntityManager, id: string, now: number): Promise<void> {
    await manager.update(WebhookSubscription, { id, disabledAt: IsNull() }, { disabledAt: now });
  }
}
