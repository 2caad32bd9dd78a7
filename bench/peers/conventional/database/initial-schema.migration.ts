import type { MigrationInterface, QueryRunner } from 'typeorm';
import { SCHEMA } from '../../../reference/store.js';

/** The service's tables, as its own migration creates them (the SQL `migration:generate` writes). */
export class InitialSchema1732262400000 implements MigrationInterface {
  name = 'InitialSchema1732262400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const kind = queryRunner.connection.options.type === 'postgres' ? 'postgres' : 'sqlite';
    for (const statement of SCHEMA[kind]) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE api_tokens');
    await queryRunner.query('DROP TABLE plants');
  }
}
