import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import { TokenBootstrapService } from './token-bootstrap.service.js';
import { TokensModule } from './tokens.module.js';

@Module({
  imports: [PassportModule.register({ session: false }), TokensModule],
  providers: [
    BearerStrategy,
    TokenBootstrapService,
    { provide: APP_GUARD, useClass: BearerAuthGuard },
  ],
})
export class AuthModule {}
