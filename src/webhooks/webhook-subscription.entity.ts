import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A webhook subscription (the 1764000000000-webhooks migration creates its
 * table). Queries go through webhook-subscriptions.repository.ts; this
 * mapping tells TypeORM's migration generator the schema. Times are Unix
 * milliseconds in bigint columns, read as strings.
 */
@Entity({ name: 'webhook_subscriptions' })
@Index('webhook_subscriptions_owner', ['owner'])
export class WebhookSubscription {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  owner!: string;

  @Column({ type: 'varchar', length: 2048 })
  url!: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  description!: string | null;

  /** The signing secret (whsec_…): needed in clear to sign, never sent after creation. */
  @Column({ type: 'varchar', length: 64 })
  secret!: string;

  @Column({ name: 'created_at', type: 'bigint' })
  createdAt!: string;

  @Column({ name: 'disabled_at', type: 'bigint', nullable: true })
  disabledAt!: string | null;
}
