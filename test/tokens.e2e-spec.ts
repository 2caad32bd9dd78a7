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
    expect(listed.out[0].split('\t')).toEqual([
      'id',
      'owner',
      'label',
      'scopes',
      'created',
      'revoked',
    ]);
    const [id, owner, label, scopes, createdAt, revokedAt] = row.split('\t');
    expect([owner, label, scopes, revokedAt]).toEqual([
      'alice',
      'laptop',
      'plants:read plants:write webhooks:manage',
      '',
    ]);
    expect(new Date(createdAt).getTime()).not.toBeNaN();
    expect(listed.out.join('\n')).not.toContain(token);

    const revoked = captured();
    expect(await runTokenCli(['revoke', id], revoked.io, env)).toBe(0);
    expectError(await plants.list(), 401, /unknown or revoked/);
    expect(await runTokenCli(['revoke', id], captured().io, env)).toBe(1);
  });

  it('limits a token to its --scope: a missing scope is the 403 insufficient_scope of JWT callers, and list shows the scopes', async () => {
    database = await createTestDatabase(kind);
    const app = await start({ NODE_ENV: 'production' });
    const env = { DATABASE_URL: database.url, NODE_ENV: 'production' };
    const issue = async (...scopes: string[]) => {
      const run = captured();
      const argv = ['create', '--owner', 'scoped', ...scopes.flatMap((s) => ['--scope', s])];
      expect(await runTokenCli(argv, run.io, env)).toBe(0);
      return `Bearer ${run.out[0]}`;
    };
    const full = plantsClient(app, await issue());
    const reader = plantsClient(app, await issue('plants:read'));
    const writer = plantsClient(app, await issue('plants:write', 'plants:write'));
    const hooks = await issue('webhooks:manage');

    expect((await full.create({ id: 1, name: 'Fern' })).status).toBe(200);
    expect((await reader.list()).body).toEqual([{ name: 'Fern' }]);
    expect((await reader.get(1)).status).toBe(200);
    const refused = await reader.create({ id: 2, name: 'Moss' });
    expectError(refused, 403, /plants:write/);
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer realm="plants", error="insufficient_scope", scope="plants:write"',
    );
    expectError(await reader.remove(1), 403, /plants:write/);
    expect((await reader.list()).body).toEqual([{ name: 'Fern' }]);
    const noRead = await writer.list();
    expectError(noRead, 403, /plants:read/);
    expect(noRead.headers['www-authenticate']).toMatch(
      /error="insufficient_scope", scope="plants:read"/,
    );
    expectError(await writer.get(1), 403);
    expect((await writer.create({ id: 2, name: 'Moss' })).status).toBe(200);
    const webhooks = await app.http().get('/webhooks').set('Authorization', hooks);
    expect(webhooks.status).toBe(200);
    const noHooks = await app.http().get('/webhooks').set('Authorization', writer.auth);
    expectError(noHooks, 403, /webhooks:manage/);
    expect(noHooks.headers['www-authenticate']).toMatch(/scope="webhooks:manage"/);
    expectError(await plantsClient(app, hooks).list(), 403);

    const listed = captured();
    expect(await runTokenCli(['list'], listed.io, env)).toBe(0);
    expect(listed.out.slice(1).map((line) => line.split('\t')[3])).toEqual([
      'plants:read plants:write webhooks:manage',
      'plants:read',
      'plants:write',
      'webhooks:manage',
    ]);
  });

  it('gives a token stored without scopes (before the column existed, or by an older instance) every scope', async () => {
    database = await createTestDatabase(kind);
    const app = await start({ NODE_ENV: 'production' });
    const { token, record } = await app.app.get(TokensService).issue('legacy');
    const dataSource = app.app.get(DataSource);
    // What an instance that does not know the column writes: a row without it.
    await dataSource.query(
      `INSERT INTO api_tokens (id, token_hash, owner, label, created_at) SELECT 'legacy-2', '${'0'.repeat(64)}', owner, label, created_at FROM api_tokens WHERE id = '${record.id}'`,
    );
    const [legacy] = await dataSource.query("SELECT scopes FROM api_tokens WHERE id = 'legacy-2'");
    expect(legacy.scopes).toBe('plants:read plants:write webhooks:manage');
    const plants = plantsClient(app, `Bearer ${token}`);
    expect((await plants.create({ id: 1, name: 'Fern' })).status).toBe(200);
    expect((await plants.remove(1)).status).toBe(204);
  });

  it('prints the usage on stdout with exit code 0 when asked for it', async () => {
    for (const argv of [['--help'], ['-h'], ['help'], ['create', '--help']]) {
      const run = captured();
      expect(await runTokenCli(argv, run.io), argv.join(' ')).toBe(0);
      expect(run.err).toEqual([]);
      expect(run.out.join('\n')).toMatch(/^Usage:/);
    }
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
      ['create', '--owner', 'a', '--scope', 'plants:admin'],
      ['create', '--owner', 'a', '--scope', 'plants:read', '--scope', ''],
      ['create', '--owner', 'a', '--scope'],
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
