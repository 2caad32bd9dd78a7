import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { retryOnce } from '../database/database-retry.js';
import type { RequestScope } from '../database/request-scope.js';
import type { ApiToken } from './api-token.entity.js';
import type { AuthenticatedCaller } from './caller-owner.decorator.js';
import { SCOPES, type Scope } from './required-scope.decorator.js';
import { generateToken, hashToken } from './token-format.js';
import { TokensRepository } from './tokens.repository.js';

export interface IssuedToken {
  token: string;
  record: ApiToken;
}

@Injectable()
export class TokensService {
  constructor(private readonly tokens: TokensRepository) {}

  /**
   * Only a few scope sets exist (one per combination issued): each is parsed
   * once, and callers of one set share one read-only Set.
   */
  private readonly scopeSets = new Map<string, ReadonlySet<string>>();

  /** Issues a new token, with all scopes unless told fewer; the token itself is returned once and never stored. */
  async issue(
    owner: string,
    label: string | null = null,
    token = generateToken(),
    scopes: readonly Scope[] = SCOPES,
  ): Promise<IssuedToken> {
    const record: ApiToken = {
      id: randomUUID(),
      tokenHash: hashToken(token),
      owner,
      label,
      scopes: SCOPES.filter((scope) => scopes.includes(scope)).join(' '),
      createdAt: new Date().toISOString(),
      revokedAt: null,
    };
    await this.tokens.insert(record);
    return { token, record };
  }

  /**
   * The owner and scopes of a live token, looked up by hash in the database
   * on every request, never cached: a revocation applies from the next request on.
   * A read, so tried once more after a failure of the database (a failover),
   * within the request's deadline (`scope`).
   */
  async callerOf(token: string, scope: RequestScope): Promise<AuthenticatedCaller | null> {
    const tokenHash = hashToken(token);
    const live = await retryOnce('repeatable', () => this.tokens.live(tokenHash, scope), scope);
    if (live === null) return null;
    let scopes = this.scopeSets.get(live.scopes);
    if (!scopes) {
      scopes = new Set(live.scopes.split(' ').filter(Boolean));
      this.scopeSets.set(live.scopes, scopes);
    }
    return { owner: live.owner, scopes };
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
