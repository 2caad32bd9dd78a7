import { APP_INTERCEPTOR } from '@nestjs/core';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { AppModule } from './app.module.js';
import { DatabaseWorkInterceptor } from './database/database-work.interceptor.js';
import { validateEnvironment } from './environment.js';

/** The APP_INTERCEPTOR providers of the app on `url`. */
function interceptorsOn(url: string): unknown[] {
  const module = AppModule.forRoot(
    validateEnvironment({ DATABASE_URL: url }),
    pino({ enabled: false }),
  );
  return (module.providers ?? [])
    .filter((provider) => (provider as { provide?: unknown }).provide === APP_INTERCEPTOR)
    .map((provider) => (provider as { useClass: unknown }).useClass);
}

describe('AppModule', () => {
  it("keeps each request's database deadline and retry on PostgreSQL", () => {
    expect(interceptorsOn('postgres://db.example/plants')).toEqual([DatabaseWorkInterceptor]);
  });

  it('runs no interceptor on SQLite, which has neither a deadline to keep nor a failure to retry', () => {
    expect(interceptorsOn('sqlite::memory:')).toEqual([]);
  });
});
