import { Injectable } from '@nestjs/common';
import { SqlStatements, type Statement } from '../database/sql-statements.js';

/** A subscription as stored. Times are Unix milliseconds (PostgreSQL returns bigint as text). */
export interface SubscriptionRow {
  id: string;
  url: string;
  description: string | null;
  createdAt: number | string;
  disabledAt: number | string | null;
}

/** What the dispatcher needs to send to a subscription. */
export interface SubscriptionTarget {
  url: string;
  secret: string;
  disabledAt: number | string | null;
}

const COLUMNS =
  'id, url, description, created_at AS "createdAt", disabled_at AS "disabledAt" FROM webhook_subscriptions';

/** Owner-scoped queries on webhook_subscriptions, as prepared statements (see sql-statements.ts). */
@Injectable()
export class WebhookSubscriptionsRepository {
  private readonly insertOne: Statement<never>;
  private readonly ofOwner: Statement<SubscriptionRow>;
  private readonly ownedOne: Statement<SubscriptionRow>;
  private readonly deleteOne: Statement<never>;
  private readonly targetOf: Statement<SubscriptionTarget>;
  private readonly disableOne: Statement<never>;
  private readonly dropPending: Statement<never>;

  constructor(private readonly statements: SqlStatements) {
    this.insertOne = statements.prepare(
      'webhook_subscriptions_insert',
      'INSERT INTO webhook_subscriptions (id, owner, url, description, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.ofOwner = statements.prepare(
      'webhook_subscriptions_list',
      `SELECT ${COLUMNS} WHERE owner = ? ORDER BY created_at, id`,
    );
    this.ownedOne = statements.prepare(
      'webhook_subscriptions_find',
      `SELECT ${COLUMNS} WHERE owner = ? AND id = ?`,
    );
    // Its deliveries go with it (ON DELETE CASCADE).
    this.deleteOne = statements.prepare(
      'webhook_subscriptions_delete',
      'DELETE FROM webhook_subscriptions WHERE owner = ? AND id = ?',
    );
    this.targetOf = statements.prepare(
      'webhook_subscriptions_target',
      'SELECT url, secret, disabled_at AS "disabledAt" FROM webhook_subscriptions WHERE id = ?',
    );
    this.disableOne = statements.prepare(
      'webhook_subscriptions_disable',
      'UPDATE webhook_subscriptions SET disabled_at = ? WHERE id = ? AND disabled_at IS NULL',
    );
    this.dropPending = statements.prepare(
      'webhook_deliveries_drop_pending',
      `UPDATE webhook_deliveries SET state = 'failed', next_attempt_at = NULL, lease_owner = NULL,
         lease_until = NULL, last_error = ? WHERE subscription_id = ? AND state = 'pending' AND id <> ?`,
    );
  }

  async insert(
    id: string,
    owner: string,
    url: string,
    description: string | null,
    secret: string,
    createdAt: number,
  ): Promise<void> {
    await this.insertOne.run([id, owner, url, description, secret, createdAt]);
  }

  list(owner: string): Promise<SubscriptionRow[]> {
    return this.ofOwner.all([owner]);
  }

  async findOwned(owner: string, id: string): Promise<SubscriptionRow | undefined> {
    const [row] = await this.ownedOne.all([owner, id]);
    return row;
  }

  async delete(owner: string, id: string): Promise<boolean> {
    return (await this.deleteOne.run([owner, id])) > 0;
  }

  async target(id: string): Promise<SubscriptionTarget | undefined> {
    const [row] = await this.targetOf.all([id]);
    return row;
  }

  /**
   * Disables the subscription and drops its pending deliveries (marked failed
   * with `reason`), all but `keep`, the one whose attempt the caller records.
   */
  async disable(id: string, now: number, reason: string, keep: string): Promise<void> {
    await this.statements.transaction([
      [this.disableOne, [now, id]],
      [this.dropPending, [reason, id, keep]],
    ]);
  }
}
