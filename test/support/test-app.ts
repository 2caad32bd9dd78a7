import { randomBytes } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type request from 'supertest';
import { afterAll, beforeAll } from 'vitest';
import { createApp } from '../../src/app.setup.js';
import { TokensService } from '../../src/auth/tokens.service.js';
import type { DatabaseKind } from '../../src/database/data-source-options.js';
import { TEST_CURSOR_SECRET } from './cursors.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';
import { validatedRequest } from './validated-request.js';

export interface TestApp {
  app: NestFastifyApplication;
  database: TestDatabase;
  http(): ReturnType<typeof request>;
  /** Issues a token for an owner, as the token CLI would. */
  tokenFor(owner: string): Promise<string>;
  /** A new owner with a token of its own: tests that use one never see each other's plants. */
  newCaller(): Promise<{ owner: string; auth: string }>;
  close(): Promise<void>;
}

/** Starts the real app (the same createApp as main.ts) on a database, ready for requests. */
export async function startApp(
  database: TestDatabase,
  env: Record<string, string> = {},
): Promise<TestApp> {
  const { app } = await createApp({
    // Quiet and unthrottled unless a suite asks otherwise: suites fire many requests from one IP.
    env: {
      NODE_ENV: 'test',
      DATABASE_URL: database.url,
      LOG_LEVEL: 'silent',
      RATE_LIMIT_ENABLED: 'false',
      CURSOR_SECRET: TEST_CURSOR_SECRET,
      ...env,
    },
    logger: process.env.DEBUG_APP ? undefined : false,
  });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  const tokens = app.get(TokensService);
  const tokenFor = async (owner: string) => (await tokens.issue(owner)).token;
  return {
    app,
    database,
    // Every response is checked against openapi.json (see validated-request.ts).
    http: () => validatedRequest(app.getHttpServer()),
    tokenFor,
    newCaller: async () => {
      const owner = `owner-${randomBytes(5).toString('hex')}`;
      return { owner, auth: `Bearer ${await tokenFor(owner)}` };
    },
    close: () => app.close(),
  };
}

/**
 * One app on one fresh database for the suite that calls it (in a describe
 * block); dropped afterwards. Read `.current` inside the tests.
 */
export function useTestApp(
  kind: DatabaseKind,
  env: Record<string, string> = {},
): { current: TestApp } {
  const holder = {} as { current: TestApp };
  beforeAll(async () => {
    const database = await createTestDatabase(kind);
    holder.current = await startApp(database, env);
  });
  afterAll(async () => {
    await holder.current?.close();
    await holder.current?.database.drop();
  });
  return holder;
}
