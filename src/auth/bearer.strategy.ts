import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { RequestScope } from '../database/request-scope.js';
import type { AuthenticatedCaller } from './caller-owner.decorator.js';
import { REALM } from './auth-challenge.exception.js';
import { JwtVerifier, looksLikeJwt } from './jwt-verifier.js';
import { TokensService } from './tokens.service.js';

interface RequestWithHeaders {
  headers: { authorization?: string };
  /** The request's database scope (request-scope.ts), set by the pipeline before it authenticates. */
  databaseScope?: RequestScope | null;
}

@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(
    private readonly tokens: TokensService,
    @Inject(JwtVerifier) private readonly jwt: JwtVerifier | null,
  ) {
    super({ realm: REALM, passReqToCallback: true });
  }

  /**
   * passport-http-bearer also reads `?access_token=` and a body field
   * `access_token`; a token in a URL ends up in logs and proxies, so only the
   * Authorization header is handed to it, with the request's database scope,
   * which the token lookup takes (`validate`, as passReqToCallback has it).
   */
  override authenticate(request: RequestWithHeaders, options?: object): void {
    const headerOnly: RequestWithHeaders = {
      headers: { authorization: request.headers.authorization },
      databaseScope: request.databaseScope,
    };
    super.authenticate(
      headerOnly as unknown as Parameters<Strategy<never>['authenticate']>[0],
      options,
    );
  }

  /**
   * A JWT is an identity provider's access token when AUTH_JWT_ISSUER is set;
   * any other credential is an opaque token looked up in the database.
   */
  async validate(request: RequestWithHeaders, token: string): Promise<AuthenticatedCaller | null> {
    if (this.jwt && looksLikeJwt(token)) return this.jwt.verify(token);
    return this.tokens.callerOf(token, request.databaseScope ?? RequestScope.background);
  }
}
