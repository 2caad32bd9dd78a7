import { randomBytes } from 'node:crypto';
import { Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { HttpVariables } from './http.variables.js';
import { PageCursors } from './page-cursor.js';

/**
 * The cursor key, from CURSOR_SECRET. Unset (only allowed outside production:
 * service-variables.ts), a random key of this process, said in the log: its
 * next links fail on another instance and after a restart.
 */
function pageCursorsFrom(config: ConfigService<HttpVariables, true>): PageCursors {
  const secret = config.get('CURSOR_SECRET', { infer: true });
  if (secret !== undefined) return new PageCursors(secret);
  new Logger('PageCursors').warn(
    'CURSOR_SECRET is not set: paging cursors are keyed with a random key of this process, so a ' +
      'next link is a 400 on another instance and after a restart. Set CURSOR_SECRET ' +
      '(required in production).',
  );
  return new PageCursors(randomBytes(32));
}

/** PageCursors for the lists that page by keyset: one key per app, whichever features import it. */
@Module({
  providers: [{ provide: PageCursors, inject: [ConfigService], useFactory: pageCursorsFrom }],
  exports: [PageCursors],
})
export class PageCursorModule {}
