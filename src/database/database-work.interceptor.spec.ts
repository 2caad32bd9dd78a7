import type { CallHandler, ExecutionContext } from '@nestjs/common';
import type { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';
import { defer, lastValueFrom, of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { DatabaseVariables } from './database.variables.js';
import { DatabaseWorkInterceptor } from './database-work.interceptor.js';
import { remainingMs } from './request-scope.js';

const BUDGET_MS = 10_000;

function interceptorOn(url: string): DatabaseWorkInterceptor {
  const settings: Partial<DatabaseVariables> = {
    DB_REQUEST_DEADLINE_MS: BUDGET_MS,
    DATABASE_URL: url,
  };
  const config = { get: (key: keyof DatabaseVariables) => settings[key] };
  return new DatabaseWorkInterceptor(
    new Reflector(),
    config as unknown as ConfigService<DatabaseVariables, true>,
  );
}

/** A GET that arrived `elapsedMs` ago. */
const request = (elapsedMs: number) =>
  ({
    switchToHttp: () => ({
      getRequest: () => ({ method: 'GET' }),
      getResponse: () => ({ elapsedTime: elapsedMs }),
    }),
    getHandler: () => () => undefined,
    getClass: () => class {},
  }) as unknown as ExecutionContext;

/** The handler: what is left of the deadline while it runs. */
const handler: CallHandler = { handle: () => defer(() => of(remainingMs())) };

describe('DatabaseWorkInterceptor', () => {
  it("runs the handler within what is left of the request's deadline on PostgreSQL", async () => {
    const left = await lastValueFrom(
      interceptorOn('postgres://db.example/plants').intercept(request(4000), handler),
    );
    expect(left).toBeGreaterThan(BUDGET_MS - 4000 - 1000);
    expect(left).toBeLessThanOrEqual(BUDGET_MS - 4000);
  });
});
