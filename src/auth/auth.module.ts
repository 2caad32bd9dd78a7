import { type DynamicModule, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { PassportModule } from '@nestjs/passport';
import type { AuthLimitVariables } from './auth-limits.variables.js';
import { AuthMetrics } from './auth-metrics.js';
import { AUTH_FAILURE_LIMITER } from './auth-failure.limiter.js';
import { AuthFailureModule } from './auth-failure.module.js';
import { BearerStrategy } from './bearer.strategy.js';
import { jwtVerifierFrom } from './jwt-settings.js';
import { JwtVerifier } from './jwt-verifier.js';
import { OwnerRequests } from './owner-requests.js';
import { REFUSAL_PACER, RefusalPacer } from './refusal-pacer.js';
import { RequestAuthenticator } from './request-authenticator.js';
import { TokenBootstrapService } from './token-bootstrap.service.js';
import { TokensModule } from './tokens.module.js';

export interface AuthOptions {
  /**
   * Count failed authentications per client address and refuse past the
   * budget (429); pace the refusals to each address (RefusalPacer).
   */
  failureBudget: boolean;
}

function refusalPacerFrom(
  config: ConfigService<AuthLimitVariables, true>,
  metrics: AuthMetrics,
): RefusalPacer {
  return new RefusalPacer(
    config.get('AUTH_REFUSAL_RATE', { infer: true }),
    config.get('AUTH_REFUSAL_DELAY_MS', { infer: true }),
    { onHold: () => metrics.refusalHeld() },
  );
}

/**
 * Authentication: opaque bearer tokens and their bootstrap, an identity
 * provider's access tokens (JWT) when AUTH_JWT_ISSUER is set, and the
 * failed-authentication budget, and the bound on each owner's requests in
 * flight (OwnerRequests).
 */
@Module({})
export class AuthModule {
  static forRoot({ failureBudget }: AuthOptions): DynamicModule {
    return {
      module: AuthModule,
      imports: [
        PassportModule.register({ session: false }),
        TokensModule,
        ...(failureBudget ? [AuthFailureModule] : []),
      ],
      providers: [
        BearerStrategy,
        TokenBootstrapService,
        RequestAuthenticator,
        OwnerRequests,
        AuthMetrics,
        { provide: JwtVerifier, inject: [ConfigService], useFactory: jwtVerifierFrom },
        ...(failureBudget
          ? [
              {
                provide: REFUSAL_PACER,
                inject: [ConfigService, AuthMetrics],
                useFactory: refusalPacerFrom,
              },
            ]
          : [
              { provide: AUTH_FAILURE_LIMITER, useValue: null },
              { provide: REFUSAL_PACER, useValue: null },
            ]),
      ],
      exports: [RequestAuthenticator, OwnerRequests],
    };
  }
}
