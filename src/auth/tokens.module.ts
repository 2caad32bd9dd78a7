import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SqlStatements } from '../database/sql-statements.js';
import { ApiToken } from './api-token.entity.js';
import { TokensService } from './tokens.service.js';

/** Token storage, shared by the HTTP app and the token command line. */
@Module({
  imports: [TypeOrmModule.forFeature([ApiToken])],
  providers: [TokensService, SqlStatements],
  exports: [TokensService],
})
export class TokensModule {}
