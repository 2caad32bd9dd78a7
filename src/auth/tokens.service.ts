import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, type Repository } from 'typeorm';
import { ApiToken } from './api-token.entity.js';
import { generateToken, hashToken } from './token-format.js';

export interface IssuedToken {
  token: string;
  record: ApiToken;
}

@Injectable()
export class TokensService {
  constructor(@InjectRepository(ApiToken) private readonly tokens: Repository<ApiToken>) {}

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

  /** The owner of a live token, looked up by hash on every request (so a revocation applies at once). */
  async ownerOf(token: string): Promise<string | null> {
    const found = await this.tokens.findOne({
      select: { owner: true },
      where: { tokenHash: hashToken(token), revokedAt: IsNull() },
    });
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
