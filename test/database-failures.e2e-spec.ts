import pg from 'pg';
import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually } from './support/eventually.js';
import { expectError } from './support/expect-error.js';
import { plantsClient } from './support/plants-client.js';
import { startApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';

/**
 * What a failover looks like to the service, made on the suites' own
 * PostgreSQL: a database that takes no writes (a standby, a demoted
 * primary) and connections that the server ends (a primary going away).
 * The whole failover, with Patroni, HAProxy and PgBouncer, is
 * failover.e2e-spec.ts; this runs in every pass, the PgBouncer one included.
 */
describe.skipIf(!databaseKinds().includes('postgres'))('database failures on PostgreSQL', () => {
  let database: TestDatabase;
  let app: TestApp;
  let admin: pg.Client;
  const name = () => new URL(database.directUrl).pathname.slice(1);

  /** Ends every session of the test database but this one: the service's, or PgBouncer's. */
  const endSessions = () =>
    admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name()],
    );

  /** A 503 in the contract's shape, with Retry-After; never a 500. */
  const expectUnavailable = (response: Response) => {
    expectError(response, 503, /database is unavailable/);
    expect(response.headers['retry-after']).toBe('1');
  };

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    app = await startApp(database, { DB_CONNECT_TIMEOUT_MS: '1000' });
    admin = new pg.Client({ connectionString: inject('postgresAdminUrl')! });
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.query(`ALTER DATABASE ${name()} RESET default_transaction_read_only`);
    await admin?.end();
    await app?.close();
    await database?.drop();
  });

  it('a database that takes no writes: writes are 503s with Retry-After, never 500s; back by itself once it does', async () => {
    const plants = plantsClient(app, `Bearer ${await app.tokenFor('read-only')}`);
    expect((await plants.create({ id: 1, name: 'Fern' })).status).toBe(200);

    await admin.query(`ALTER DATABASE ${name()} SET default_transaction_read_only = on`);
    await endSessions();
    for (let i = 0; i < 3; i++) {
      expectUnavailable(await plants.create({ id: 2 + i, name: 'Moss' }));
      expectUnavailable(await plants.remove(1));
      // Directly, a read finds no writable connection either; through PgBouncer it
      // may still be answered (by a standby), and either is right, a 500 never.
      const list = await plants.list();
      if (list.status !== 200) expectUnavailable(list);
    }

    await admin.query(`ALTER DATABASE ${name()} RESET default_transaction_read_only`);
    // The proxy's part in a failover: sessions on the old primary end (PgBouncer
    // keeps its own server connections, which only the server or the proxy behind it can end).
    await endSessions();
    let status = 0;
    for (let attempt = 0; attempt < 5 && status !== 200; attempt++) {
      status = (await plants.create({ id: 2, name: 'Moss' })).status;
    }
    expect(status).toBe(200);
    expect((await plants.remove(1)).status).toBe(204);
    expect((await plants.list()).body).toEqual([{ name: 'Moss' }]);
  });

  it('connections ended under load: only 503s with Retry-After, every acknowledged create stored, and back at once', async () => {
    const plants = plantsClient(app, `Bearer ${await app.tokenFor('cut')}`);
    const acknowledged: number[] = [];
    const failures: Response[] = [];
    let nextId = 1;
    let running = true;
    const client = async () => {
      while (running) {
        const id = nextId++;
        const response = await plants.create({ id, name: `plant ${id}` });
        if (response.status === 200) acknowledged.push(id);
        else failures.push(response);
      }
    };
    const clients = Array.from({ length: 4 }, client);
    for (let cut = 0; cut < 5; cut++) {
      // Under load again before each cut: some creates acknowledged since the last.
      const before = acknowledged.length;
      await eventually(
        () => acknowledged.length >= before + 10,
        () => `${acknowledged.length - before} creates acknowledged since cut ${cut}`,
        10_000,
        10,
      );
      await endSessions();
    }
    running = false;
    await Promise.all(clients);

    console.log(
      `connections ended 5 times under 4 clients: ${acknowledged.length} creates acknowledged, ${failures.length} failed (${failures.filter((r) => r.status === 503).length} of them 503s)`,
    );
    for (const response of failures) expectUnavailable(response);
    // Each cut can fail at most the requests in flight and their one retry.
    expect(acknowledged.length).toBeGreaterThan(failures.length);
    const direct = new pg.Client({ connectionString: database.directUrl });
    await direct.connect();
    const stored = await direct
      .query<{ id: string }>(`SELECT id::text AS id FROM plants WHERE owner = 'cut'`)
      .finally(() => direct.end());
    const kept = new Set(stored.rows.map((row) => Number(row.id)));
    expect(acknowledged.filter((id) => !kept.has(id))).toEqual([]);
    // The next request after the cuts needs no retry of the client's.
    expect((await plants.create({ id: nextId, name: 'after' })).status).toBe(200);
  });
});
