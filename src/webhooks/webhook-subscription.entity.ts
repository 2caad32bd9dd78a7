import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { unixMillis } from './unix-millis.js';

/**
 * A webhook subscription (the 1764000000000-webhooks migration creates its
 * table), queried through webhook-subscriptions.repository.ts.
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

  /** The secret the last rotation replaced: deliveries carry its signature too until previousSecretUntil. */
  @Column({ name: 'previous_secret', type: 'varchar', length: 64, nullable: true })
  previousSecret?: string | null;

  @Column({
    name: 'previous_secret_until',
    type: 'bigint',
    nullable: true,
    transformer: unixMillis,
  })
  previousSecretUntil?: number | null;

  @Column({ name: 'created_at', type: 'bigint', transformer: unixMillis })
  createdAt!: number;

  @Column({ name: 'disabled_at', type: 'bigint', nullable: true, transformer: unixMillis })
  disabledAt!: number | null;
}
