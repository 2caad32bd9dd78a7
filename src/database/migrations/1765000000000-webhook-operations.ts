import { type MigrationInterface, type QueryRunner, TableColumn } from 'typeorm';

/**
 * Secret rotation with overlap: the secret a rotation replaced, and until when
 * deliveries are also signed with it. Expand-only: nullable columns that an
 * older instance never reads.
 */
export class WebhookOperations1765000000000 implements MigrationInterface {
  name = 'WebhookOperations1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumns('webhook_subscriptions', [
      new TableColumn({ name: 'previous_secret', type: 'varchar', length: '64', isNullable: true }),
      new TableColumn({ name: 'previous_secret_until', type: 'bigint', isNullable: true }),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('webhook_subscriptions', 'previous_secret_until');
    await queryRunner.dropColumn('webhook_subscriptions', 'previous_secret');
  }
}
