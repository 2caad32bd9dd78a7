import { DataSource } from 'typeorm';
import { afterEach, describe, expect, it } from 'vitest';
import { TokensService } from '../src/auth/tokens.service.js';
import { runTokenCli } from '../src/auth/token-cli.js';
import { expectError } from './support/expect-error.js';
import { plantsClient } from './support/plants-client.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { startApp, type TestApp } from './support/test-app.js';

const BOOTSTRAP = 'pst_bootstrap-token-for-tests-0123456789abcdef';

function captured() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe.each(databaseKinds())('tokens: command line and bootstrap on %s', (kind) => {
  let database: TestDatabase;
  const apps: TestApp[] = [];
  const start = async (env: Record<string, string>) => {
    const app = await startApp(database, env);
    apps.push(app);
    return app;
  };
  const tokenCount = async (app: TestApp) => app.app.get(TokensService).count();

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    await database?.drop();
  });

  it('create prints the token alone on stdout; it works at once; revoke refuses it from the next request on, while the service runs', async () => {
    database = await createTestDatabase(kind);
    const app = await start({ NODE_ENV: 'production' });
    const env = { DATABASE_URL: database.url, NODE_ENV: 'production' };

    const created = captured();
    expect(
      await runTokenCli(['create', '--owner', 'alice', '--label', 'laptop'], created.io, env),
    ).toBe(0);
    expect(created.out).toHaveLength(1);
    const [token] = created.out;
    expect(token).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
    expect(created.err.join('\n')).toMatch(/issued for owner "alice"/);

    const plants = plantsClient(app, `Bearer ${token}`);
    expect((await plants.create({ id: 1, name: 'Fern' })).status).toBe(200);

    const listed = captured();
    expect(await runTokenCli(['list'], listed.io, env)).toBe(0);
    const row = listed.out.find((line) => line.includes('alice'))!;
    const [id, owner, label, createdAt, revokedAt] = row.split('\t');
    expect([owner, label, revokedAt]).toEqual(['alice', 'laptop', '']);
    expect(new Date(createdAt).getTime()).not.toBeNaN();
    expect(listed.out.join('\n')).not.toContain(token);

    const revoked = captured();
    expect(await runTokenCli(['revoke', id], revoked.io, env)).toBe(0);
    expectError(await plants.list(), 401, /unknown or revoked/);
    expect(await runTokenCli(['revoke', id], captured().io, env)).toBe(1);
  });

  it('rejects bad command lines with a usage message and exit code 2', async () => {
    database = await createTestDatabase(kind);
    const env = { DATABASE_URL: database.url };
    for (const argv of [
      [],
      ['create'],
      ['create', '--owner', 'has space'],
      ['revoke'],
      ['frobnicate'],
      ['create', '--owner', 'a', '--bogus'],
    ]) {
      const run = captured();
      expect(await runTokenCli(argv, run.io, env), argv.join(' ')).toBe(2);
      expect(run.out).toEqual([]);
      expect(run.err.join('\n')).toMatch(/Usage:/);
    }
  });

  it('outside production, issues one token for demo when none exists, and only once', async () => {
    database = await createTestDatabase(kind);
    const first = await start({ NODE_ENV: 'development' });
    const rows = await first.app.get(TokensService).list();
    expect(rows.map((r) => r.owner)).toEqual(['demo']);
    await first.close();
    apps.splice(0);
    const second = await start({ NODE_ENV: 'development' });
    expect(await tokenCount(second)).toBe(1);
  });

  it('in production, issues nothing implicitly', async () => {
    database = await createTestDatabase(kind);
    const app = await start({ NODE_ENV: 'production' });
    expect(await tokenCount(app)).toBe(0);
  });

  it('registers BOOTSTRAP_TOKEN for BOOTSTRAP_OWNER (also in production); a revoked one stays revoked', async () => {
    database = await createTestDatabase(kind);
    const env = { NODE_ENV: 'production', BOOTSTRAP_TOKEN: BOOTSTRAP, BOOTSTRAP_OWNER: 'compose' };
    const app = await start(env);
    const plants = plantsClient(app, `Bearer ${BOOTSTRAP}`);
    expect((await plants.create({ id: 1, name: 'Fern' })).status).toBe(200);
    const [record] = await app.app.get(TokensService).list();
    expect(record.owner).toBe('compose');
    await app.app.get(TokensService).revoke(record.id);
    await app.close();
    apps.splice(0);
    const restarted = await start(env);
    expect(await tokenCount(restarted)).toBe(1);
    expectError(await plantsClient(restarted, `Bearer ${BOOTSTRAP}`).list(), 401);
  });

  it('defaults BOOTSTRAP_OWNER to demo', async () => {
    database = await createTestDatabase(kind);
    const app = await start({ NODE_ENV: 'production', BOOTSTRAP_TOKEN: BOOTSTRAP });
    const rows: Array<{ owner: string }> = await app.app
      .get(DataSource)
      .query('SELECT owner FROM api_tokens');
    expect(rows).toEqual([{ owner: 'demo' }]);
  });
});
