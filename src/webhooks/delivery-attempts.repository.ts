import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Not, type Repository } from 'typeorm';
import { CompiledQuery, slots } from '../database/compiled-query.js';
import { Transactions } from '../database/transactions.js';
import { type DeliveryState, WebhookDelivery } from './webhook-delivery.entity.js';

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

/**
 * What the dispatcher records of the deliveries it claimed: each attempt's
 * outcome (SQL generated once, compiled-query.ts), and the pending
 * deliveries dropped when their subscription is disabled.
 */
@Injectable()
export class DeliveryAttemptsRepository {
  private readonly record: CompiledQuery<RecordSlot>;
  /** Records one attempt; whether this instance still held the delivery (see recordAttempt). */
  private readonly recordOne: (values: Record<RecordSlot, unknown>) => Promise<boolean>;

  constructor(
    @InjectRepository(WebhookDelivery) deliveries: Repository<WebhookDelivery>,
    transactions: Transactions,
  ) {
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
    this.recordOne = transactions.grouped(
      async (manager, values: Record<RecordSlot, unknown>) =>
        (await this.record.affected(manager, values)) > 0,
      { onPostgres: 'statement', synced: false },
    );
  }

  /**
   * Records an attempt of a delivery this instance holds; false when it no
   * longer holds it (its lease expired and another instance took over).
   * On SQLite, attempts that end meanwhile are recorded together, one UPDATE
   * each in one unsynced transaction (Transactions.grouped): one commit on
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
    return this.recordOne(values);
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
}
