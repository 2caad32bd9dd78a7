import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { unixMillis } from './unix-millis.js';
import { WebhookSubscription } from './webhook-subscription.entity.js';

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/**
 * One event for one subscription: the outbox row the create writes in its
 * transaction, then the state of its delivery (the 1764000000000-webhooks
 * migration creates the table). A dispatcher holds a row while it sends it:
 * `leaseOwner` until `leaseUntil`.
 */
@Entity({ name: 'webhook_deliveries' })
@Index('webhook_deliveries_due', ['state', 'nextAttemptAt'])
@Index('webhook_deliveries_subscription', ['subscriptionId', 'createdAt'])
@Index('webhook_deliveries_finished', ['finishedAt'])
export class WebhookDelivery {
  /** The event id, sent as webhook-id. */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id!: string;

  @Column({ name: 'subscription_id', type: 'varchar', length: 36 })
  subscriptionId!: string;

  // Its deliveries go with a deleted subscription.
  @ManyToOne(() => WebhookSubscription, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'subscription_id' })
  subscription?: WebhookSubscription;

  /** The request body, exactly as it is sent. */
  @Column({ type: 'text' })
  payload!: string;

  @Column({ type: 'varchar', length: 16 })
  state!: DeliveryState;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'next_attempt_at', type: 'bigint', nullable: true, transformer: unixMillis })
  nextAttemptAt!: number | null;

  @Column({ name: 'lease_owner', type: 'varchar', length: 36, nullable: true })
  leaseOwner!: string | null;

  @Column({ name: 'lease_until', type: 'bigint', nullable: true, transformer: unixMillis })
  leaseUntil!: number | null;

  @Column({ name: 'last_status', type: 'integer', nullable: true })
  lastStatus!: number | null;

  @Column({ name: 'last_error', type: 'varchar', length: 300, nullable: true })
  lastError!: string | null;

  @Column({ name: 'created_at', type: 'bigint', transformer: unixMillis })
  createdAt!: number;

  /**
   * When it was delivered or failed (null while pending, and on rows an older
   * instance finished): retention deletes it WEBHOOK_RETENTION later.
   */
  @Column({ name: 'finished_at', type: 'bigint', nullable: true, transformer: unixMillis })
  finishedAt!: number | null;

  /** The W3C traceparent of the create that wrote the row, when traced: the delivery's spans link to it. */
  @Column({ name: 'trace_parent', type: 'varchar', length: 55, nullable: true })
  traceParent!: string | null;
}
