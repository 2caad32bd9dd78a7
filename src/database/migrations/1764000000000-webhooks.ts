import { type MigrationInterface, type QueryRunner, Table, TableIndex } from 'typeorm';

/**
 * Webhook subscriptions and their outbox of deliveries. A delivery row is
 * written in the same transaction as the plant it announces, so that an
 * acknowledged create's event survives a crash; the dispatcher claims due
 * rows (next_attempt_at) whose lease (lease_until) is free or expired.
 * Times are Unix milliseconds in bigint columns: the same on both databases.
 */
export class Webhooks1764000000000 implements MigrationInterface {
  name = 'Webhooks1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'webhook_subscriptions',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'owner', type: 'varchar', length: '64', isNullable: false },
          { name: 'url', type: 'varchar', length: '2048', isNullable: false },
          { name: 'description', type: 'varchar', length: '255', isNullable: true },
          { name: 'secret', type: 'varchar', length: '64', isNullable: false },
          { name: 'created_at', type: 'bigint', isNullable: false },
          { name: 'disabled_at', type: 'bigint', isNullable: true },
        ],
        // The create path asks for an owner's subscriptions on every create.
        indices: [new TableIndex({ name: 'webhook_subscriptions_owner', columnNames: ['owner'] })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          // The event id, sent as webhook-id.
          { name: 'id', type: 'varchar', length: '40', isPrimary: true },
          { name: 'subscription_id', type: 'varchar', length: '36', isNullable: false },
          // The request body, exactly as it is sent.
          { name: 'payload', type: 'text', isNullable: false },
          { name: 'state', type: 'varchar', length: '16', isNullable: false },
          { name: 'attempts', type: 'integer', isNullable: false, default: 0 },
          { name: 'next_attempt_at', type: 'bigint', isNullable: true },
          { name: 'lease_owner', type: 'varchar', length: '36', isNullable: true },
          { name: 'lease_until', type: 'bigint', isNullable: true },
          { name: 'last_status', type: 'integer', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '300', isNullable: true },
          { name: 'created_at', type: 'bigint', isNullable: false },
          // The W3C traceparent of the create that wrote the row, when traced: the
          // delivery's spans link to it.
          { name: 'trace_parent', type: 'varchar', length: '55', isNullable: true },
        ],
        foreignKeys: [
          {
            columnNames: ['subscription_id'],
            referencedTableName: 'webhook_subscriptions',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
        indices: [
          // The dispatcher's claim: pending rows by due time.
          new TableIndex({
            name: 'webhook_deliveries_due',
            columnNames: ['state', 'next_attempt_at'],
          }),
          // The deliveries list, newest first.
          new TableIndex({
            name: 'webhook_deliveries_subscription',
            columnNames: ['subscription_id', 'created_at'],
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('webhook_deliveries');
    await queryRunner.dropTable('webhook_subscriptions');
  }
}
