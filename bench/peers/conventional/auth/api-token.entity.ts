import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('api_tokens')
export class ApiToken {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  /** SHA-256 of the token, hex, as the service stores it. */
  @Column({ name: 'token_hash', type: 'varchar', length: 64, unique: true })
  tokenHash!: string;

  @Column({ type: 'varchar', length: 64 })
  owner!: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  label!: string | null;

  @Column({ name: 'created_at', type: 'varchar', length: 32 })
  createdAt!: string;

  @Column({ name: 'revoked_at', type: 'varchar', length: 32, nullable: true })
  revokedAt!: string | null;
}
