import { Injectable } from '@nestjs/common';
import { SqlStatements, type Statement } from '../database/sql-statements.js';

type DeliveryState = 'pending' | 'delivered' | 'failed';

/** A delivery as the deliveries list shows it. bigint columns come back as text on PostgreSQL. */
export interface DeliveryRow {
  eventId: string;
  state: DeliveryState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: number | string | null;
  createdAt: number | string;
}

/** A delivery this instance claimed and now owns until its lease ends. */
export interface ClaimedDelivery {
  id: string;
  subscriptionId: string;
  payload: string;
  attempts: number;
  /** The traceparent of the create that wrote it, when that was traced. */
  traceParent: string | null;
}

/** How one attempt ended, as recorded. */
export interface AttemptRecord {
  state: DeliveryState;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: number | null;
}

const DUE = `state = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)`;

/**
 * The outbox of webhook deliveries. The create path writes rows
 * (plants.repository.ts); every instance's dispatcher claims due ones with
 * a lease, so that one instance at a time sends a delivery, and another
 * takes it over only when the lease has expired (its holder died).
 */
@Injectable()
export class WebhookDeliveriesRepository {
  private readonly claimDue: Statement<ClaimedDelivery>;
  private readonly record: Statement<never>;
  private readonly release: Statement<never>;
  private readonly latest: Statement<DeliveryRow>;
  private readonly countPending: Statement<{ n: number | string }>;

  constructor(statements: SqlStatements) {
    // On PostgreSQL, SKIP LOCKED lets instances claim side by side without
    // waiting on each other's rows; SQLite has one writer at a time anyway.
    const lock = statements.dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
    this.claimDue = statements.prepare(
      'webhook_deliveries_claim',
      `UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ?
       WHERE id IN (SELECT id FROM webhook_deliveries WHERE ${DUE}
                    ORDER BY next_attempt_at LIMIT ? ${lock})
       RETURNING id, subscription_id AS "subscriptionId", payload, attempts,
         trace_parent AS "traceParent"`,
    );
    this.record = statements.prepare(
      'webhook_deliveries_record',
      `UPDATE webhook_deliveries SET state = ?, attempts = ?, last_status = ?, last_error = ?,
         next_attempt_at = ?, lease_owner = NULL, lease_until = NULL
       WHERE id = ? AND lease_owner = ? AND state = 'pending'`,
    );
    this.release = statements.prepare(
      'webhook_deliveries_release',
      'UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?',
    );
    this.latest = statements.prepare(
      'webhook_deliveries_latest',
      `SELECT id AS "eventId", state, attempts, last_status AS "lastStatus", last_error AS "lastError",
         next_attempt_at AS "nextAttemptAt", created_at AS "createdAt"
       FROM webhook_deliveries WHERE subscription_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
    );
    this.countPending = statements.prepare(
      'webhook_deliveries_pending',
      `SELECT COUNT(*) AS n FROM webhook_deliveries WHERE state = 'pending'`,
    );
  }

  /** Claims up to `limit` due deliveries for `leaseOwner` until `leaseUntil`. */
  claim(
    leaseOwner: string,
    now: number,
    leaseUntil: number,
    limit: number,
  ): Promise<ClaimedDelivery[]> {
    return this.claimDue.all([leaseOwner, leaseUntil, now, now, limit]);
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
    const { state, lastStatus, lastError, nextAttemptAt } = outcome;
    const changed = await this.record.run([
      state,
      attempts,
      lastStatus,
      lastError,
      nextAttemptAt,
      id,
      leaseOwner,
    ]);
    return changed > 0;
  }

  /** Gives a claimed delivery back unattempted (shutdown), for any instance to take at once. */
  async releaseClaim(id: string, leaseOwner: string): Promise<void> {
    await this.release.run([id, leaseOwner]);
  }

  /** The subscription's latest deliveries, newest first. */
  latestOf(subscriptionId: string, limit: number): Promise<DeliveryRow[]> {
    return this.latest.all([subscriptionId, limit]);
  }

  async pendingCount(): Promise<number> {
    const [row] = await this.countPending.all([]);
    return Number(row.n);
  }
}
