import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AuthGuard, PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiToken } from './api-token.entity.js';
import { BearerStrategy } from './bearer.strategy.js';

/** Every route needs a bearer token: the guard is global. */
@Module({
  imports: [PassportModule, TypeOrmModule.forFeature([ApiToken])],
  providers: [BearerStrategy, { provide: APP_GUARD, useClass: AuthGuard('bearer') }],
})
export class AuthModule {}
