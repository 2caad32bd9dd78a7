import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFetchResponse } from './support/openapi-validator.js';
import { jsonText } from './support/plants-client.js';
import { killHard, runServiceToExit, startService } from './support/service-process.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';

const TOKEN = 'pst_process-test-token-0123456789abcdefghijkl';

const call = async (url: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(url + path, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : jsonText(body),
  });
  await checkFetchResponse(method, path, response);
  return response;
};

describe.each(databaseKinds())('the built service (node dist/bundle/main.js) on %s', (kind) => {
  let database: TestDatabase;
  let cwd: string;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    cwd = await mkdtemp(join(tmpdir(), 'plant-store-run-'));
  });
  afterAll(async () => {
    await database.drop();
    await rm(cwd, { recursive: true, force: true });
  });

  it('migrates at startup, and keeps every plant answered 200 through kill -9 and a restart', async () => {
    const env = { NODE_ENV: 'production', DATABASE_URL: database.url, BOOTSTRAP_TOKEN: TOKEN };
    const first = await startService(cwd, env);
    const acknowledged: string[] = [];
    for (let id = 1; id <= 25; id++) {
      const response = await call(first.url, 'POST', '/plants', {
        id: 2n ** 62n + BigInt(id),
        name: `p${id}`,
      });
      expect(response.status).toBe(200);
      acknowledged.push(`p${id}`);
    }
    // Killed right after the last answer: no shutdown hook, no flush.
    await killHard(first);

    const second = await startService(cwd, env);
    try {
      const listed = await call(second.url, 'GET', '/plants');
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as Array<{ name: string }>).map((p) => p.name)).toEqual(
        acknowledged,
      );
      expect(second.output()).not.toContain(TOKEN);
    } finally {
      await killHard(second);
    }
  });
});

describe('the built service with a bad configuration', () => {
  const runWith = async (env: Record<string, string>) => {
    const cwd = await mkdtemp(join(tmpdir(), 'plant-store-run-'));
    try {
      return await runServiceToExit(cwd, env);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  };
  /** The output's lines, each of which must be a JSON log line. */
  const logLines = (output: string) =>
    output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; variable?: string; msg: string });

  it('stops at startup with exit code 1 and exactly one JSON line for a bad PORT', async () => {
    const { code, output } = await runWith({ NODE_ENV: 'production', PORT: 'abc' });
    expect(code).toBe(1);
    expect(logLines(output)).toEqual([
      expect.objectContaining({
        level: 60,
        variable: 'PORT',
        msg: 'PORT: "abc" is not a whole number; allowed: an integer from 0 to 65535',
      }),
    ]);
  });

  it('in production, stops an API instance without CURSOR_SECRET with one line naming it', async () => {
    for (const role of ['all', 'api']) {
      // Empty is unset: the suite's default secret is taken away.
      const env = { NODE_ENV: 'production', APP_ROLE: role, CURSOR_SECRET: '' };
      const { code, output } = await runWith(env);
      expect(code, output).toBe(1);
      expect(logLines(output)).toEqual([
        expect.objectContaining({
          level: 60,
          variable: 'CURSOR_SECRET',
          msg: expect.stringMatching(/^CURSOR_SECRET: not set, but required in production/),
        }),
      ]);
    }
  });

  it('outside production, starts without CURSOR_SECRET and says in a warning that its key is random', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'plant-store-run-'));
    try {
      const service = await startService(cwd, { NODE_ENV: 'test', CURSOR_SECRET: '' });
      await killHard(service);
      const warning = logLines(service.output()).find((line) =>
        line.msg.startsWith('CURSOR_SECRET is not set'),
      );
      expect(warning, service.output()).toMatchObject({ level: 40 });
      expect(warning!.msg).toMatch(/random key of this process/);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it('writes one line per bad variable, naming it, and never a secret value', async () => {
    const { code, output } = await runWith({ PORT: 'eighty', DATABASE_URL: 'mysql://nope' });
    expect(code).toBe(1);
    const lines = logLines(output);
    expect(lines.map((line) => line.variable)).toEqual(['PORT', 'DATABASE_URL']);
    expect(lines.map((line) => line.msg)).toEqual([
      'PORT: "eighty" is not a whole number; allowed: an integer from 0 to 65535',
      'DATABASE_URL: the value is not in the allowed form; allowed: sqlite:<file path> or postgres://user:password@host:port/database (several host:port, comma-separated)',
    ]);
    expect(output).not.toContain('mysql://nope');
  });
});

describe.skipIf(!databaseKinds().includes('postgres'))(
  'the built service with a PostgreSQL that refuses it for good (needs PostgreSQL)',
  () => {
    let database: TestDatabase;
    let cwd: string;
    beforeAll(async () => {
      database = await createTestDatabase('postgres');
      cwd = await mkdtemp(join(tmpdir(), 'plant-store-run-'));
    });
    afterAll(async () => {
      await database.drop();
      await rm(cwd, { recursive: true, force: true });
    });

    it.each([
      // Through PgBouncer in its pass, which reports the server's 3D000 as 08P01:
      // at once the first time, but for server_login_retry (15 s by default) it
      // then holds the next client of that database, so each run names another.
      [
        'a database that does not exist',
        'url',
        (url: URL, run: number) => (url.pathname = `/no_such_database_${run}`),
        /does not exist/,
      ],
      // Straight to the server: the suites' PgBouncer logs every client in as one user.
      [
        'a login refused',
        'directUrl',
        (url: URL) => (url.username = 'no_such_role'),
        /refused the login/,
      ],
    ] as const)(
      '%s: the service and the migrations job exit 1 at the first failure, with one line naming the cause',
      async (_name, which, change, cause) => {
        for (const [run, script] of [undefined, 'dist/migrate.main.js'].entries()) {
          const url = new URL(database[which]);
          change(url, run);
          const env = { NODE_ENV: 'production', DATABASE_URL: url.toString() };
          const { code, output } = await runServiceToExit(cwd, env, script);
          expect(code, output).toBe(1);
          // At once: no second attempt. Each retry would log its own error line (Nest's
          // TypeOrmModule: "Unable to connect to the database. Retrying (n)..."), 3 s apart.
          // A bound on the time taken proved nothing the lines do not, and failed when a busy
          // machine took longer than that to start Node.
          const lines = output
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line) as { level: number });
          const problems = lines.filter((line) => line.level >= 40);
          expect(problems, output).toHaveLength(1);
          expect(JSON.stringify(problems[0])).toMatch(cause);
          expect(JSON.stringify(problems[0])).toContain('DATABASE_URL');
        }
      },
    );
  },
);
