import { Injectable } from '@nestjs/common';
import { SqlStatements, type Statement } from '../database/sql-statements.js';
import type { ApiToken } from './api-token.entity.js';

const COLUMNS =
  'id, token_hash AS "tokenHash", owner, label, created_at AS "createdAt", revoked_at AS "revokedAt"';

/**
 * The queries on api_tokens (see api-token.entity.ts), as prepared statements
 * through SqlStatements, the way every repository of the service runs SQL.
 * Only the owner lookup runs per request; the rest serves the token command
 * line and start-up.
 */
@Injectable()
export class TokensRepository {
  private readonly insertOne: Statement<never>;
  private readonly liveOwnerByHash: Statement<{ owner: string }>;
  private readonly findByHash: Statement<ApiToken>;
  private readonly all: Statement<ApiToken>;
  private readonly countAll: Statement<{ count: number | string }>;
  private readonly revokeLive: Statement<never>;

  constructor(statements: SqlStatements) {
    this.insertOne = statements.prepare(
      'api_tokens_insert',
      'INSERT INTO api_tokens (id, token_hash, owner, label, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.liveOwnerByHash = statements.prepare(
      'api_tokens_live_owner',
      'SELECT owner FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL',
    );
    this.findByHash = statements.prepare(
      'api_tokens_find',
      `SELECT ${COLUMNS} FROM api_tokens WHERE token_hash = ?`,
    );
    this.all = statements.prepare(
      'api_tokens_list',
      `SELECT ${COLUMNS} FROM api_tokens ORDER BY created_at, id`,
    );
    this.countAll = statements.prepare(
      'api_tokens_count',
      'SELECT COUNT(*) AS count FROM api_tokens',
    );
    this.revokeLive = statements.prepare(
      'api_tokens_revoke',
      'UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
    );
  }

  async insert(token: ApiToken): Promise<void> {
    const { id, tokenHash, owner, label, createdAt, revokedAt } = token;
    await this.insertOne.run([id, tokenHash, owner, label, createdAt, revokedAt]);
  }

  /** The owner of the live (not revoked) token with this hash. */
  async liveOwner(tokenHash: string): Promise<string | null> {
    const [found] = await this.liveOwnerByHash.all([tokenHash]);
    return found?.owner ?? null;
  }

  async findOne(tokenHash: string): Promise<ApiToken | null> {
    const [found] = await this.findByHash.all([tokenHash]);
    return found ?? null;
  }

  list(): Promise<ApiToken[]> {
    return this.all.all([]);
  }

  async count(): Promise<number> {
    const [{ count }] = await this.countAll.all([]);
    // PostgreSQL returns COUNT(*) (a bigint) as text.
    return Number(count);
  }

  /** Marks a live token revoked; false when there is no live token with that id. */
  async revoke(id: string, at: string): Promise<boolean> {
    return (await this.revokeLive.run([at, id])) > 0;
  }
}
