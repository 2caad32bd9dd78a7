import { Logger as NestLogger } from '@nestjs/common';
import type { Logger, LogLevel, LogMessage, QueryRunner } from 'typeorm';

/**
 * TypeORM's messages through Nest's logger, so that they share its format and
 * its silence (the token CLI keeps stdout for the token alone). A failed
 * query is only a debug line: a unique violation is an ordinary 409, and the
 * exception filter logs every real server fault with its cause.
 */
export class TypeOrmNestLogger implements Logger {
  private readonly logger = new NestLogger('TypeORM');

  logQuery(): void {}

  logQueryError(error: string | Error, query: string): void {
    this.logger.debug(
      `query failed: ${error instanceof Error ? error.message : error} -- ${query}`,
    );
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn(`slow query (${time} ms): ${query}`);
  }

  logSchemaBuild(): void {}

  logMigration(message: string): void {
    this.logger.log(message);
  }

  log(
    level: LogLevel,
    message: string | number | LogMessage | (string | number | LogMessage)[],
    _queryRunner?: QueryRunner,
  ): void {
    const text = typeof message === 'object' ? JSON.stringify(message) : String(message);
    if (level === 'warn') this.logger.warn(text);
    else if (level === 'error') this.logger.error(text);
    else this.logger.log(text);
  }
}
