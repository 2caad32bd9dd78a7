import { type MigrationInterface, type QueryRunner, TableColumn, TableIndex } from 'typeorm';

/**
 * When a delivery finished (delivered or failed), so that retention deletes
 * it WEBHOOK_RETENTION later. Expand-only: a nullable column an older
 * instance never writes (its finished rows keep NULL, and retention counts
 * them from their creation), and an index for the sweep.
 */
export class WebhookRetention1767000000000 implements MigrationInterface {
  name = 'WebhookRetention1767000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'webhook_deliveries',
      new TableColumn({ name: 'finished_at', type: 'bigint', isNullable: true }),
    );
    await queryRunner.createIndex(
      'webhook_deliveries',
      new TableIndex({ name: 'webhook_deliveries_finished', columnNames: ['finished_at'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('webhook_deliveries', 'webhook_deliveries_finished');
    await queryRunner.dropColumn('webhook_deliveries', 'finished_at');
  }
}
