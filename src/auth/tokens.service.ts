import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, type Repository } from 'typeorm';
import { SqlStatements, type Statement } from '../database/sql-statements.js';
import { ApiToken } from './api-token.entity.js';
import { generateToken, hashToken } from './token-format.js';

export interface IssuedToken {
  token: string;
  record: ApiToken;
}

@Injectable()
export class TokensService {
  /** The per-request lookup, a prepared statement (see sql-statements.ts); the rest is rare and stays on TypeORM. */
  private readonly liveOwner: Statement<{ owner: string }>;

  constructor(
    @InjectRepository(ApiToken) private readonly tokens: Repository<ApiToken>,
    statements: SqlStatements,
  ) {
    this.liveOwner = statements.prepare(
      'api_tokens_live_owner',
      'SELECT owner FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL',
    );
  }

  /** Issues a new token; the token itself is returned once and never stored. */
  async issue(
    owner: string,
    label: string | null = null,
    token = generateToken(),
  ): Promise<IssuedToken> {
    const record = this.tokens.create({
      id: randomUUID(),
      tokenHash: hashToken(token),
      owner,
      label,
      createdAt: new Date().toISOString(),
      revokedAt: null,
    });
    await this.tokens.insert(record);
    return { token, record };
  }

  /**
   * The owner of a live token, looked up by hash in the database on every
   * request, never cached: a revocation applies from the next request on.
   */
  async ownerOf(token: string): Promise<string | null> {
    const [found] = await this.liveOwner.all([hashToken(token)]);
    return found?.owner ?? null;
  }

  async findByToken(token: string): Promise<ApiToken | null> {
    return this.tokens.findOneBy({ tokenHash: hashToken(token) });
  }

  list(): Promise<ApiToken[]> {
    return this.tokens.find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }

  async count(): Promise<number> {
    return this.tokens.count();
  }

  /** Revokes a token by its id; false when there is no live token with that id. */
  async revoke(id: string): Promise<boolean> {
    const result = await this.tokens.update(
      { id, revokedAt: IsNull() },
      { revokedAt: new Date().toISOString() },
    );
    return (result.affected ?? 0) > 0;
  }
}
