import { type DynamicModule, Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { AUTH_FAILURE_LIMITER } from './auth-failure.limiter.js';
import { AuthFailureModule } from './auth-failure.module.js';
import { BearerStrategy } from './bearer.strategy.js';
import { TokenBootstrapService } from './token-bootstrap.service.js';
import { TokensModule } from './tokens.module.js';

export interface AuthOptions {
  /** Count failed authentications per client address and refuse past the budget (429). */
  failureBudget: boolean;
}

/** Authentication: bearer tokens, their bootstrap, and the failed-authentication budget. */
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
        ...(failureBudget ? [] : [{ provide: AUTH_FAILURE_LIMITER, useValue: null }]),
      ],
      exports: [failureBudget ? AuthFailureModule : AUTH_FAILURE_LIMITER],
    };
  }
}
