import { createHash } from 'node:crypto';
import { Injectable, UnauthorizedException } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { InjectRepository } from '@nestjs/typeorm';
import { Strategy } from 'passport-http-bearer';
import { IsNull, Repository } from 'typeorm';
import { ApiToken } from './api-token.entity.js';

export interface AuthenticatedUser {
  owner: string;
}

@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy) {
  constructor(@InjectRepository(ApiToken) private readonly tokens: Repository<ApiToken>) {
    super();
  }

  async validate(token: string): Promise<AuthenticatedUser> {
    const tokenHash = createHash('sha256').update(token).digest('hex');
    const found = await this.tokens.findOneBy({ tokenHash, revokedAt: IsNull() });
    if (!found) throw new UnauthorizedException('the bearer token is unknown or revoked');
    return { owner: found.owner };
  }
}
