import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiToken } from './api-token.entity.js';
import { TokensRepository } from './tokens.repository.js';
import { TokensService } from './tokens.service.js';

/** Token storage, shared by the HTTP app and the token command line. */
@Module({
  imports: [TypeOrmModule.forFeature([ApiToken])],
  providers: [TokensService, TokensRepository],
  exports: [TokensService],
})
export class TokensModule {}
