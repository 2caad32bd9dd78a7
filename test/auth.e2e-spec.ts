import { createHash, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { TokensService } from '../src/auth/tokens.service.js';
import { expectError } from './support/expect-error.js';
import { plantsClient } from './support/plants-client.js';
import { databaseKinds } from './support/test-database.js';
import { useTestApp } from './support/test-app.js';

describe.each(databaseKinds())('authentication and owner isolation on %s', (kind) => {
  const t = useTestApp(kind);

  const operations = [
    ['POST /plants', () => t.current.http().post('/plants').send({ id: 1, name: 'x' })],
    ['GET /plants', () => t.current.http().get('/plants')],
    ['DELETE /plants/1', () => t.current.http().delete('/plants/1')],
  ] as const;

  it.each(operations)(
    '%s without a token is a 401 with WWW-Authenticate: Bearer realm="plants"',
    async (_, call) => {
      const response = await call();
      expectError(response, 401, /bearer token is required/);
      expect(response.headers['www-authenticate']).toBe('Bearer realm="plants"');
    },
  );

  it.each(operations)(
    '%s with an unknown token is a 401 with error="invalid_token"',
    async (_, call) => {
      const response = await call().set(
        'Authorization',
        `Bearer pst_${randomBytes(32).toString('base64url')}`,
      );
      expectError(response, 401, /unknown or revoked/);
      expect(response.headers['www-authenticate']).toBe(
        'Bearer realm="plants", error="invalid_token"',
      );
    },
  );

  it.each([
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['no token after Bearer', 'Bearer'],
    ['two words after Bearer', 'Bearer a b'],
  ])('a header with %s is a 401 with the plain challenge', async (_, header) => {
    const response = await t.current.http().get('/plants').set('Authorization', header);
    expectError(response, 401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="plants"');
  });

  it('accepts the token only from the Authorization header, not from ?access_token= or the body', async () => {
    const token = await t.current.tokenFor('query-owner');
    const viaQuery = await t.current.http().get(`/plants?access_token=${token}`);
    expectError(viaQuery, 401);
    const viaBody = await t.current
      .http()
      .post('/plants')
      .set('Content-Type', 'application/json')
      .send({ access_token: token, id: 1, name: 'x' });
    expectError(viaBody, 401);
  });

  it('accepts the scheme name in any case', async () => {
    const token = await t.current.tokenFor('case-owner');
    expect(
      (await t.current.http().get('/plants').set('Authorization', `bearer ${token}`)).status,
    ).toBe(200);
  });

  it('refuses a revoked token from the next request on', async () => {
    const tokens = t.current.app.get(TokensService);
    const { token, record } = await tokens.issue('revoked-owner');
    const plants = plantsClient(t.current, `Bearer ${token}`);
    expect((await plants.list()).status).toBe(200);
    expect(await tokens.revoke(record.id)).toBe(true);
    const refused = await plants.list();
    expectError(refused, 401, /unknown or revoked/);
    expect(refused.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(await tokens.revoke(record.id)).toBe(false);
  });

  it('stores only a hash of each token', async () => {
    const token = await t.current.tokenFor('hash-owner');
    expect(token).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
    const rows: Array<Record<string, unknown>> = await t.current.app
      .get(DataSource)
      .query('SELECT * FROM api_tokens');
    expect(rows.length).toBeGreaterThan(0);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(token.slice(4));
    // What is there is the SHA-256 of the token, and every row holds a hash of that form.
    const sha256 = createHash('sha256').update(token).digest('hex');
    expect(rows.filter((row) => row.token_hash === sha256)).toHaveLength(1);
    for (const row of rows) expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps owners apart: list, create of the same id, and delete', async () => {
    const alice = plantsClient(t.current, (await t.current.newCaller()).auth);
    const bob = plantsClient(t.current, (await t.current.newCaller()).auth);
    expect((await alice.create({ id: 1, name: 'Alice fern' })).status).toBe(200);
    // The same id for another owner is another plant, not a conflict.
    expect((await bob.create({ id: 1, name: 'Bob cactus' })).status).toBe(200);
    expect((await alice.create({ id: 2, name: 'Alice ivy' })).status).toBe(200);
    expect((await alice.list()).body).toEqual([{ name: 'Alice fern' }, { name: 'Alice ivy' }]);
    expect((await bob.list()).body).toEqual([{ name: 'Bob cactus' }]);
    // Bob cannot delete Alice's plant 2: a 404, exactly like an unknown id.
    const foreign = await bob.remove(2);
    const unknown = await bob.remove(3);
    expectError(foreign, 404);
    expect(foreign.body.message).toBe(unknown.body.message.replace('3', '2'));
    expect((await alice.list()).body).toHaveLength(2);
    // Deleting his own plant 1 leaves Alice's plant 1 alone.
    expect((await bob.remove(1)).status).toBe(204);
    expect((await alice.list()).body).toEqual([{ name: 'Alice fern' }, { name: 'Alice ivy' }]);
  });

  it('leaves docs and health open without a token', async () => {
    expect((await t.current.http().get('/docs-json')).status).toBe(200);
    expect((await t.current.http().get('/health/live')).status).toBe(200);
    expect((await t.current.http().get('/health/ready')).status).toBe(200);
  });
});
