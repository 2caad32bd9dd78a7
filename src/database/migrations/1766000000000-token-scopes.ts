import { type MigrationInterface, type QueryRunner, TableColumn } from 'typeorm';

/**
 * The scopes of an opaque token, space-separated as in OAuth's `scope`. Every
 * existing token, and any token an older instance issues without naming
 * scopes, gets all of them: it keeps every right it had. Expand-only.
 */
export class TokenScopes1766000000000 implements MigrationInterface {
  name = 'TokenScopes1766000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'api_tokens',
      new TableColumn({
        name: 'scopes',
        type: 'varchar',
        length: '255',
        isNullable: false,
        default: "'plants:read plants:write webhooks:manage'",
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('api_tokens', 'scopes');
  }
}
