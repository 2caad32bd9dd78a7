import { type MigrationInterface, type QueryRunner, Table } from 'typeorm';

/**
 * Plants keyed by (owner, id) so that ids are unique per owner and the
 * database, not the service, decides a race between creates of one id.
 * Written with the dialect-neutral Table API so that one migration serves
 * SQLite and PostgreSQL.
 */
export class InitialSchema1732262400000 implements MigrationInterface {
  name = 'InitialSchema1732262400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'plants',
        columns: [
          { name: 'owner', type: 'varchar', length: '64', isPrimary: true },
          { name: 'id', type: 'bigint', isPrimary: true },
          { name: 'name', type: 'varchar', length: '255', isNullable: false },
          { name: 'tag', type: 'varchar', length: '255', isNullable: true },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'api_tokens',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'token_hash', type: 'varchar', length: '64', isNullable: false, isUnique: true },
          { name: 'owner', type: 'varchar', length: '64', isNullable: false },
          { name: 'label', type: 'varchar', length: '255', isNullable: true },
          { name: 'created_at', type: 'varchar', length: '32', isNullable: false },
          { name: 'revoked_at', type: 'varchar', length: '32', isNullable: true },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('api_tokens');
    await queryRunner.dropTable('plants');
  }
}
