import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, IsNull, MoreThan, type Repository } from 'typeorm';
import { CompiledQuery, slots } from '../database/compiled-query.js';
import type { RequestScope } from '../database/request-scope.js';
import { Transactions } from '../database/transactions.js';
import type { PagePosition } from './dto/page.query.js';
import { WebhookSubscription } from './webhook-subscription.entity.js';
import { webhookUrlIdentity } from './webhook-url-identity.js';

/** A subscription as its owner sees it: everything but the secret. */
export type SubscriptionRow = Pick<
  WebhookSubscription,
  'id' | 'url' | 'description' | 'createdAt' | 'disabledAt'
>;

/** What the dispatcher needs to send to a subscription. */
export interface SubscriptionTarget extends Pick<WebhookSubscription, 'url' | 'disabledAt'> {
  /** The secrets to sign with, newest first: the current one, and the one it replaced during the overlap. */
  secrets: string[];
}

const VISIBLE = { id: true, url: true, description: true, createdAt: true, disabledAt: true };

/** What came of an insert bounded per owner. */
export type InsertOutcome =
  { kind: 'created' } | { kind: 'full'; count: number } | { kind: 'duplicate'; existingId: string };

/** The first key of the PostgreSQL advisory lock that serialises one owner's subscription creates. */
const CREATE_LOCK_CLASS = 24_001;

/** Owner-scoped queries on webhook_subscriptions, through a TypeORM `Repository<WebhookSubscription>`. */
@Injectable()
export class WebhookSubscriptionsRepository {
  /** Per delivery attempt: SQL generated once, see compiled-query.ts. */
  private readonly targetOf: CompiledQuery<'id'>;
  private readonly postgres: boolean;

  constructor(
    @InjectRepository(WebhookSubscription)
    private readonly subscriptions: Repository<WebhookSubscription>,
    private readonly transactions: Transactions,
  ) {
    this.postgres = subscriptions.manager.connection.options.type === 'postgres';
    this.targetOf = CompiledQuery.build(
      subscriptions
        .createQueryBuilder('s')
        .select('s.url', 'url')
        .addSelect('s.secret', 'secret')
        .addSelect('s.disabled_at', 'disabledAt')
        .addSelect('s.previous_secret', 'previousSecret')
        .addSelect('s.previous_secret_until', 'previousSecretUntil')
        .where('s.id = :id', slots('id')),
    );
  }

  /**
   * Inserts the subscription unless its owner already has `max` of them or
   * one with the same URL, however spelled: the check and the insert in one
   * transaction, one at a time per owner, so that concurrent creates cannot
   * pass the bound together. On PostgreSQL a transaction-scoped advisory lock on the owner
   * takes the turn (released at commit, so safe behind PgBouncer in
   * transaction mode); SQLite's writes already take turns (Transactions).
   * Rows that break either rule from before the rules existed are kept.
   */
  insertBounded(
    subscription: WebhookSubscription,
    max: number,
    scope: RequestScope,
  ): Promise<InsertOutcome> {
    return this.transactions.run(async (manager) => {
      if (this.postgres) {
        await manager.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
          CREATE_LOCK_CLASS,
          subscription.owner,
        ]);
      }
      // The owner's URLs, compared in their normal form (see webhookUrlIdentity): a
      // form SQL cannot compute, and the bound keeps the list short.
      const existing = await manager.find(WebhookSubscription, {
        select: { id: true, url: true },
        where: { owner: subscription.owner },
        order: { createdAt: 'ASC', id: 'ASC' },
      });
      const identity = webhookUrlIdentity(subscription.url);
      const same = existing.find(({ url }) => webhookUrlIdentity(url) === identity);
      if (same) return { kind: 'duplicate', existingId: same.id };
      if (existing.length >= max) return { kind: 'full', count: existing.length };
      await manager.insert(WebhookSubscription, subscription);
      return { kind: 'created' };
    }, scope);
  }

  /**
   * The owner's subscriptions, oldest first (id breaks ties), after `after`
   * when given (keyset paging), at most `take` of them when given.
   */
  list(
    owner: string,
    { take, after }: { take?: number; after?: PagePosition },
    scope: RequestScope,
  ): Promise<SubscriptionRow[]> {
    return this.transactions.read(
      (manager) =>
        manager.find(WebhookSubscription, {
          select: VISIBLE,
          where: after
            ? [
                { owner, createdAt: MoreThan(after.createdAt) },
                { owner, createdAt: after.createdAt, id: MoreThan(after.id) },
              ]
            : { owner },
          order: { createdAt: 'ASC', id: 'ASC' },
          take,
        }),
      scope,
    );
  }

  findOwned(owner: string, id: string, scope: RequestScope): Promise<SubscriptionRow | null> {
    return this.transactions.read(
      (manager) => manager.findOne(WebhookSubscription, { select: VISIBLE, where: { owner, id } }),
      scope,
    );
  }

  /** Deletes the owner's subscription; its deliveries go with it (ON DELETE CASCADE). */
  async delete(owner: string, id: string, scope: RequestScope): Promise<boolean> {
    const result = await this.transactions.write(
      (manager) => manager.delete(WebhookSubscription, { owner, id }),
      scope,
    );
    return (result.affected ?? 0) > 0;
  }

  /** Where and how to send to the subscription at `now`. */
  async target(id: string, now: number): Promise<SubscriptionTarget | undefined> {
    const [row] = await this.targetOf.rows<{
      url: string;
      secret: string;
      disabledAt: number | string | null;
      previousSecret: string | null;
      previousSecretUntil: number | string | null;
    }>(this.subscriptions.manager, { id });
    if (!row) return undefined;
    // Raw rows are not hydrated: PostgreSQL returns the bigint as text.
    const overlapping = row.previousSecret !== null && Number(row.previousSecretUntil ?? 0) > now;
    return {
      url: row.url,
      disabledAt: row.disabledAt === null ? null : Number(row.disabledAt),
      secrets: overlapping ? [row.secret, row.previousSecret!] : [row.secret],
    };
  }

  /**
   * Replaces the owner's subscription secret with `secret`; the one it
   * replaces still signs until `until` (a rotation within an overlap drops
   * the oldest: the newest two sign). False when there is no such subscription.
   */
  async rotateSecret(
    owner: string,
    id: string,
    secret: string,
    until: number,
    scope: RequestScope,
  ): Promise<boolean> {
    return this.transactions.run(async (manager) => {
      const current = await manager.findOne(WebhookSubscription, {
        select: { id: true, secret: true },
        where: { owner, id },
        lock: this.postgres ? { mode: 'pessimistic_write' } : undefined,
      });
      if (!current) return false;
      await manager.update(
        WebhookSubscription,
        { id },
        { secret, previousSecret: current.secret, previousSecretUntil: until },
      );
      return true;
    }, scope);
  }

  /** Marks the subscription disabled, on `manager` (a transaction that also drops its deliveries). */
  async disable(manager: EntityManager, id: string, now: number): Promise<void> {
    await manager.update(WebhookSubscription, { id, disabledAt: IsNull() }, { disabledAt: now });
  }
}
