import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An issued API token. Only the SHA-256 of the token is kept: the token
 * itself is shown once, when it is created. Timestamps are ISO-8601 UTC
 * strings so that one schema serves SQLite and PostgreSQL alike.
 */
@Entity({ name: 'api_tokens' })
export class ApiToken {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'token_hash', type: 'varchar', length: 64, unique: true })
  tokenHash!: string;

  @Column({ type: 'varchar', length: 64 })
  owner!: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  label!: string | null;

  @Column({ name: 'created_at', type: 'varchar', length: 32 })
  createdAt!: string;

  /** Space-separated, as OAuth's `scope`; all of them unless the token was issued with fewer. */
  @Column({ type: 'varchar', length: 255, default: 'plants:read plants:write webhooks:manage' })
  scopes!: string;

  @Column({ name: 'revoked_at', type: 'varchar', length: 32, nullable: true })
  revokedAt!: string | null;
}
