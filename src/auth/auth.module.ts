import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { BearerStrategy } from './bearer.strategy.js';
import { TokenBootstrapService } from './token-bootstrap.service.js';
import { TokensModule } from './tokens.module.js';

@Module({
  imports: [PassportModule.register({ session: false }), TokensModule],
  providers: [BearerStrategy, TokenBootstrapService],
})
export class AuthModule {}
