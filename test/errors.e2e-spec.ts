import { DataSource } from 'typeorm';
import { loadBetterSqlite3 } from '../src/database/better-sqlite3.js';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FairPoolGate } from '../src/database/fair-pool-gate.js';
import { expectError } from './support/expect-error.js';
import { plantsClient } from './support/plants-client.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { createTestDatabase, databaseKinds } from './support/test-database.js';
import { startApp, useTestApp } from './support/test-app.js';

describe.each(databaseKinds())('errors on %s', (kind) => {
  const t = useTestApp(kind);

  it.each([
    ['GET', '/nothing-here'],
    ['POST', '/plants/1'],
    ['PUT', '/plants/1'],
    ['PATCH', '/plants'],
    ['GET', '/plants/1'],
    ['GET', '/%E0%A4%A'],
  ])('an unknown route %s %s is a 404 in the Error shape', async (method, path) => {
    const { auth } = await t.current.newCaller();
    const response = await t.current
      .http()
      [method.toLowerCase() as 'get'](path)
      .set('Authorization', auth);
    expect([400, 404]).toContain(response.status);
    expectError(response, response.status);
  });

  it.each([
    ['an unknown route', '/nothing-here'],
    ['a trailing slash', '/plants/'],
    ['a malformed URL', '/%E0%A4%A'],
    ['an over-long path parameter', `/plants/${'9'.repeat(200)}`],
  ])(
    'the error for %s never repeats the query string, which may carry ?access_token=',
    async (_, path) => {
      const token = await t.current.tokenFor('query-echo');
      const response = await t.current.http().get(`${path}?access_token=${token}`);
      expect(response.status).toBeGreaterThanOrEqual(400);
      expectError(response, response.status);
      expect(response.text).not.toContain(token);
      expect(response.text).not.toContain('access_token');
    },
  );

  it('a server fault is a 500 that reveals no SQL, driver message or stack', async () => {
    const { auth } = await t.current.newCaller();
    const dataSource = t.current.app.get(DataSource);
    await dataSource.query('ALTER TABLE plants RENAME TO plants_away');
    try {
      const response = await plantsClient(t.current, auth).list();
      expectError(response, 500, /^internal server error$/);
      expect(response.text).not.toMatch(/plants|SELECT|relation|table|at .*\.ts/i);
    } finally {
      await dataSource.query('ALTER TABLE plants_away RENAME TO plants');
    }
    expect((await plantsClient(t.current, auth).list()).status).toBe(200);
  });
});

describe('database outages', () => {
  it('SQLite: a locked database is a 503 with Retry-After, and the service recovers by itself', async () => {
    const database = await createTestDatabase('sqlite');
    const app = await startApp(database, { DB_STATEMENT_TIMEOUT_MS: '200' });
    const locker = new (loadBetterSqlite3())(database.url.slice('sqlite:'.length));
    try {
      const plants = plantsClient(app, `Bearer ${await app.tokenFor('locked')}`);
      locker.exec('BEGIN EXCLUSIVE');
      const refused = await plants.create({ id: 1, name: 'Fern' });
      expectError(refused, 503, /database is unavailable/);
      expect(refused.headers['retry-after']).toBe('1');
      locker.exec('COMMIT');
      expect((await plants.create({ id: 1, name: 'Fern' })).status).toBe(200);
    } finally {
      locker.close();
      await app.close();
      await database.drop();
    }
  });

  describe.skipIf(!databaseKinds().includes('postgres'))('PostgreSQL (needs PostgreSQL)', () => {
    const cleanup: Array<() => Promise<void>> = [];
    afterAll(async () => {
      for (const step of cleanup.reverse()) await step();
    });

    /** The app on a new database that it reaches through a proxy the test can cut. */
    async function appBehindProxy(settings: Record<string, string> = {}) {
      const database = await createTestDatabase('postgres');
      cleanup.push(() => database.drop());
      const target = new URL(database.url);
      const proxy = await new TcpProxy(target.hostname, Number(target.port || 5432)).start();
      cleanup.push(() => proxy.stop());
      target.host = `127.0.0.1:${proxy.port}`;
      const app = await startApp({ ...database, url: target.toString() }, settings);
      cleanup.push(() => app.close());
      return { app, proxy };
    }

    it('unreachable: requests get a 503 within the timeout, and the service recovers when it is back', async () => {
      const { app, proxy } = await appBehindProxy({ DB_CONNECT_TIMEOUT_MS: '1000' });
      const plants = plantsClient(app, `Bearer ${await app.tokenFor('outage')}`);
      expect((await plants.create({ id: 1, name: 'Fern' })).status).toBe(200);

      proxy.cut();
      const started = Date.now();
      for (let i = 0; i < 3; i++) {
        const response = await plants.list();
        expectError(response, 503, /database is unavailable/);
      }
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await app.http().get('/health/ready')).status).toBe(503);

      proxy.restore();
      let recovered = 0;
      for (let attempt = 0; attempt < 20 && recovered !== 200; attempt++) {
        recovered = (await plants.list()).status;
      }
      expect(recovered).toBe(200);
      expect((await plants.list()).body).toEqual([{ name: 'Fern' }]);
    });

    it("shares the pool as the client address's work during the token lookup, then as the owner's", async () => {
      // A subscription to a loopback receiver, which nothing here sends to (no create follows it).
      const { app } = await appBehindProxy({
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      });
      const auth = `Bearer ${await app.tokenFor('party')}`;
      const plants = plantsClient(app, auth);
      // Every checkout asks tryEnter first, once (FailoverPool.acquireFairly).
      const entered = vi.spyOn(FairPoolGate.prototype, 'tryEnter');
      try {
        expect((await plants.create({ id: 1, name: 'Fern' })).status).toBe(200);
        expect((await plants.list()).status).toBe(200);
        expect((await plants.get(1)).status).toBe(200);
        expect((await plants.remove(1)).status).toBe(204);
        // The webhook routes too: Transactions.run, read and write.
        const created = await app
          .http()
          .post('/webhooks')
          .set('Authorization', auth)
          .send({ url: 'http://127.0.0.1:9/hook' });
        expect(created.status).toBe(201);
        expect((await app.http().get('/webhooks').set('Authorization', auth)).status).toBe(200);
        const deleted = await app
          .http()
          .delete(`/webhooks/${(created.body as { id: string }).id}`)
          .set('Authorization', auth);
        expect(deleted.status).toBe(204);
        // The webhook worker's polls, `background`, may come in between.
        const parties = entered.mock.calls
          .map(([party]) => party)
          .filter((party) => party !== 'background');
        // Each request: its token lookup as its address's, then its work as its owner's.
        expect(parties).toEqual(
          Array.from({ length: 7 }, () => ['address:127.0.0.1', 'owner:party']).flat(),
        );
      } finally {
        entered.mockRestore();
      }
    });

    it("a statement that gets no answer: a 503 at the request's deadline, not the statement's timeout", async () => {
      const { app, proxy } = await appBehindProxy({
        DB_REQUEST_DEADLINE_MS: '1000',
        DB_STATEMENT_TIMEOUT_MS: '30000',
      });
      const plants = plantsClient(app, `Bearer ${await app.tokenFor('stalled')}`);
      expect((await plants.create({ id: 1, name: 'Fern' })).status).toBe(200);
      const reads = proxy.stallWhenSent('FROM "plants" "p"');
      const started = Date.now();
      expectError(await plants.list(), 503, /database/);
      expect(reads.seen).toBe(1);
      // The deadline, 1 s after the request arrived; the statement alone would have had 30 s.
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect((await plants.list()).body).toEqual([{ name: 'Fern' }]);
      // A webhook route's work keeps the deadline too.
      const subscriptions = proxy.stallWhenSent('FROM "webhook_subscriptions"');
      const listedAt = Date.now();
      const webhooks = await app.http().get('/webhooks').set('Authorization', plants.auth);
      expectError(webhooks, 503, /database/);
      expect(subscriptions.seen).toBe(1);
      expect(Date.now() - listedAt).toBeGreaterThanOrEqual(900);
      expect(Date.now() - listedAt).toBeLessThan(15_000);
    });

    it('a connection lost mid-statement: a read and a create run again on another, a delete does not', async () => {
      const { app, proxy } = await appBehindProxy();
      const plants = plantsClient(app, `Bearer ${await app.tokenFor('lost')}`);

      const inserts = proxy.cutWhenSent('INSERT INTO "plants"');
      expect((await plants.create({ id: 1, name: 'Fern' })).status).toBe(200);
      expect(inserts.seen).toBe(2);

      const reads = proxy.cutWhenSent('FROM "plants" "p"');
      const listed = await plants.list();
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([{ name: 'Fern' }]);
      expect(reads.seen).toBe(2);

      // Its outcome is unknown to the service: a 503, and repeating it is safe.
      const deletes = proxy.cutWhenSent('DELETE FROM "plants"');
      expectError(await plants.remove(1), 503, /database is unavailable/);
      expect(deletes.seen).toBe(1);
      expect((await plants.list()).body).toEqual([{ name: 'Fern' }]);
      expect((await plants.remove(1)).status).toBe(204);
      expect((await plants.list()).body).toEqual([]);
    });
  });
});
