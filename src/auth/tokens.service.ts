import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { ApiToken } from './api-token.entity.js';
import { generateToken, hashToken } from './token-format.js';
import { TokensRepository } from './tokens.repository.js';

export interface IssuedToken {
  token: string;
  record: ApiToken;
}

@Injectable()
export class TokensService {
  constructor(private readonly tokens: TokensRepository) {}

  /** Issues a new token; the token itself is returned once and never stored. */
  async issue(
    owner: string,
    label: string | null = null,
    token = generateToken(),
  ): Promise<IssuedToken> {
    const record: ApiToken = {
      id: randomUUID(),
      tokenHash: hashToken(token),
      owner,
      label,
      createdAt: new Date().toISOString(),
      revokedAt: null,
    };
    await this.tokens.insert(record);
    return { token, record };
  }

  /**
   * The owner of a live token, looked up by hash in the database on every
   * request, never cached: a revocation applies from the next request on.
   */
  ownerOf(token: string): Promise<string | null> {
    return this.tokens.liveOwner(hashToken(token));
  }

  findByToken(token: string): Promise<ApiToken | null> {
    return this.tokens.findOne(hashToken(token));
  }

  list(): Promise<ApiToken[]> {
    return this.tokens.list();
  }

  count(): Promise<number> {
    return this.tokens.count();
  }

  /** Revokes a token by its id; false when there is no live token with that id. */
  revoke(id: string): Promise<boolean> {
    return this.tokens.revoke(id, new Date().toISOString());
  }
}
