import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, type Repository } from 'typeorm';
import { CompiledQuery, slots } from '../database/compiled-query.js';
import type { RequestScope } from '../database/request-scope.js';
import { Transactions } from '../database/transactions.js';
import { ApiToken } from './api-token.entity.js';

/**
 * The queries on api_tokens, through a TypeORM `Repository<ApiToken>`. Only
 * the owner lookup runs per request, as SQL its QueryBuilder generated once
 * (see compiled-query.ts); the rest serves the token command line and start-up.
 */
@Injectable()
export class TokensRepository {
  private readonly liveByHash: CompiledQuery<'tokenHash'>;

  constructor(
    @InjectRepository(ApiToken) private readonly tokens: Repository<ApiToken>,
    private readonly transactions: Transactions,
  ) {
    this.liveByHash = CompiledQuery.build(
      tokens
        .createQueryBuilder('t')
        .select('t.owner', 'owner')
        .addSelect('t.scopes', 'scopes')
        .where('t.token_hash = :tokenHash AND t.revoked_at IS NULL', slots('tokenHash')),
    );
  }

  async insert(token: ApiToken): Promise<void> {
    await this.transactions.write((manager) => manager.insert(ApiToken, token));
  }

  /** The owner and scopes of the live (not revoked) token with this hash. */
  async live(
    tokenHash: string,
    scope: RequestScope,
  ): Promise<{ owner: string; scopes: string } | null> {
    const [found] = await this.liveByHash.rows<{ owner: string; scopes: string }>(
      this.tokens.manager,
      { tokenHash },
      scope,
    );
    return found ?? null;
  }

  findOne(tokenHash: string): Promise<ApiToken | null> {
    return this.tokens.findOneBy({ tokenHash });
  }

  list(): Promise<ApiToken[]> {
    return this.tokens.find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }

  count(): Promise<number> {
    return this.tokens.count();
  }

  /** Marks a live token revoked; false when there is no live token with that id. */
  async revoke(id: string, at: string): Promise<boolean> {
    const result = await this.transactions.write((manager) =>
      manager.update(ApiToken, { id, revokedAt: IsNull() }, { revokedAt: at }),
    );
    return (result.affected ?? 0) > 0;
  }
}
