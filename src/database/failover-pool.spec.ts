import { connect, createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { DeadlineInStatementError, NoConnectionError } from './database-errors.js';
import { FailoverPool, type FailoverPoolOptions } from './failover-pool.js';
import { parsePostgresUrl } from './postgres-url.js';
import { eventually } from '../../test/support/eventually.js';
import { nextMacrotask } from './next-macrotask.js';
import { handOver, RequestScope } from './request-scope.js';

const adminUrl = inject('postgresAdminUrl');

/** A database of this spec's own, so that making it read-only disturbs no other suite. */
async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl! });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** `work`, whose checkouts are due by `expiresAt`, on behalf of `party`. */
const withDeadline = <T>(expiresAt: number, work: () => T, party?: string): T =>
  handOver(RequestScope.until(expiresAt, party), work);

const pid = async (client: pg.PoolClient) =>
  (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;

describe.skipIf(!adminUrl)('FailoverPool on PostgreSQL (needs PostgreSQL)', () => {
  const name = `plant_store_failover_pool_${process.pid}`;
  let url: string;
  const pools: FailoverPool[] = [];
  const poolFor = (databaseUrl: string, options: Partial<FailoverPoolOptions> = {}) => {
    const pool = new FailoverPool({
      hosts: parsePostgresUrl(databaseUrl).hosts,
      max: 4,
      connectionTimeoutMillis: 2000,
      query_timeout: 5000,
      ...options,
    });
    pool.on('error', () => undefined);
    pools.push(pool);
    return pool;
  };

  beforeAll(async () => {
    await admin(`DROP DATABASE IF EXISTS ${name}`);
    await admin(`CREATE DATABASE ${name}`);
    const target = new URL(adminUrl!);
    target.pathname = `/${name}`;
    url = target.toString();
    const setup = new pg.Client({ connectionString: url });
    await setup.connect();
    await setup.query('CREATE TABLE marks (n int)');
    await setup.end();
  });

  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end().catch(() => undefined)));
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('refuses a connection to a server that takes no writes, and takes one again once it does', async () => {
    const pool = poolFor(url);
    await admin(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    try {
      await expect(pool.connect()).rejects.toBeInstanceOf(NoConnectionError);
      expect(pool.totalCount).toBe(0);
    } finally {
      await admin(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
    }
    const client = await pool.connect();
    await client.query('INSERT INTO marks VALUES (1)');
    client.release();
  });

  it('after a 25006 drops that connection and every other one made before it', async () => {
    const pool = poolFor(url);
    const [a, b] = [await pool.connect(), await pool.connect()];
    const before = new Set([await pid(a), await pid(b)]);
    b.release();
    // As a demoted primary answers a connection that was writable a moment ago.
    await a.query('SET default_transaction_read_only = on');
    await expect(a.query('INSERT INTO marks VALUES (2)')).rejects.toMatchObject({
      code: '25006',
    });
    a.release();
    const c = await pool.connect();
    expect(before.has(await pid(c))).toBe(false);
    await c.query('INSERT INTO marks VALUES (2)');
    c.release();
    expect(pool.totalCount).toBe(1);
  });

  it('drops a connection whose server ended it, and the next one works', async () => {
    const pool = poolFor(url);
    const a = await pool.connect();
    // As TypeORM does for a checked-out connection: its end is an event, not a crash.
    a.on('error', () => undefined);
    const old = await pid(a);
    await admin(`SELECT pg_terminate_backend(${old})`);
    await expect(a.query('SELECT 1')).rejects.toThrow();
    a.release();
    const b = await pool.connect();
    expect(await pid(b)).not.toBe(old);
    b.release();
  });

  it("gives a statement no more than the request's deadline, and drops its connection", async () => {
    // A statement timeout far past the deadline: the deadline's ends it (a
    // DeadlineInStatementError; the statement timeout's says "Query read timeout").
    const pool = poolFor(url, { query_timeout: 60_000 });
    // A statement that waits for as long as the test wants: for a lock another session holds.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock(1)');
    // A connection keeps the scope it was checked out in for its statements.
    const client = await withDeadline(Date.now() + 1000, () => pool.connect());
    const old = await pid(client);
    const started = Date.now();
    try {
      await expect(client.query('SELECT pg_advisory_lock(1)')).rejects.toBeInstanceOf(
        DeadlineInStatementError,
      );
      expect(Date.now() - started).toBeLessThan(20_000);
      // pg-pool's own query() calls the client's with a callback: the deadline holds there too.
      const answered = await withDeadline(
        Date.now() + 300,
        () => new Promise((resolve) => pool.query('SELECT pg_advisory_lock(1)', [], resolve)),
      );
      expect(answered).toBeInstanceOf(DeadlineInStatementError);
    } finally {
      await holder.end();
    }
    client.release();
    const next = await pool.connect();
    expect(await pid(next)).not.toBe(old);
    next.release();
  });

  it('does not wait for a connection past the deadline', async () => {
    const pool = poolFor(url, { max: 1, connectionTimeoutMillis: 60_000 });
    const held = await pool.connect();
    const started = Date.now();
    await expect(withDeadline(Date.now() + 200, () => pool.connect())).rejects.toMatchObject({
      name: 'DeadlineExceededError',
    });
    expect(Date.now() - started).toBeLessThan(20_000);
    held.release();
    // The abandoned checkout gave its connection back: the pool is not short of one.
    const again = await pool.connect();
    again.release();
  });

  it('sets no deadline timer for a checkout that an idle connection serves', async () => {
    const pool = poolFor(url, { max: 2, connectionTimeoutMillis: 60_000 });
    (await pool.connect()).release();
    const held: pg.PoolClient[] = [];
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      held.push(await withDeadline(Date.now() + 30_000, () => pool.connect()));
      // pg-pool's own connection timeout only: none bounded by the deadline.
      expect(timers.mock.calls.map(([, ms]) => ms)).toEqual([60_000]);
      // A second checkout finds none idle and makes a connection: that wait is bounded.
      held.push(await withDeadline(Date.now() + 30_000, () => pool.connect()));
      expect(timers.mock.calls.some(([, ms]) => ms !== undefined && ms <= 30_000)).toBe(true);
    } finally {
      timers.mockRestore();
      for (const client of held) client.release();
    }
  });

  it("leaves the wait to pg-pool's own timeout when that comes before the deadline", async () => {
    const pool = poolFor(url, { max: 1, connectionTimeoutMillis: 200 });
    const held = await pool.connect();
    const started = Date.now();
    await expect(withDeadline(Date.now() + 60_000, () => pool.connect())).rejects.toThrow(
      'timeout exceeded when trying to connect',
    );
    expect(Date.now() - started).toBeLessThan(20_000);
    held.release();
    const again = await pool.connect();
    again.release();
  });

  describe.each([
    { fairShare: true, first: 'bob' },
    { fairShare: false, first: 'alice' },
  ])('with FAIR_SHARE_ENABLED=$fairShare', ({ fairShare, first }) => {
    it(`gives a freed connection to ${first} when alice holds the whole pool and waits for more before bob`, async () => {
      const pool = poolFor(url, { max: 2, fairShare });
      const as = (owner: string) => withDeadline(Date.now() + 10_000, () => pool.connect(), owner);
      const held = [await as('alice'), await as('alice')];
      const order: string[] = [];
      let checked = (): void => {};
      const check = new Promise<void>((resolve) => (checked = resolve));
      const waiting = ['alice', 'alice', 'bob'].map((owner) =>
        as(owner).then(async (client: pg.PoolClient) => {
          order.push(owner);
          await check;
          await client.query('SELECT 1');
          client.release();
        }),
      );
      // Every waiter queued, and the event loop served: none has a connection while none is free.
      await nextMacrotask();
      expect(order).toEqual([]);
      held[0].release();
      await eventually(() => order.length > 0, 'no waiter got the freed connection', 10_000);
      expect(order).toEqual([first]);
      checked();
      held[1].release();
      await Promise.all(waiting);
      expect(order).toHaveLength(3);
    });
  });

  describe('with several hosts', () => {
    /** A listener on a port of its own on 127.0.0.1 that does `onSocket` with each connection. */
    const loopbackHost = async (onSocket: (socket: Socket) => void) => {
      const server = createServer(onSocket);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { server, port: (server.address() as { port: number }).port };
    };
    let closed: Server;
    let closedPort: number;
    beforeAll(async () => {
      // A host that accepts and at once hangs up, as a node that is down behind a proxy.
      ({ server: closed, port: closedPort } = await loopbackHost((socket) => socket.destroy()));
    });
    afterAll(() => new Promise<void>((resolve) => closed.close(() => resolve())));

    it('connects to the next host when the first fails, and stays there', async () => {
      const real = new URL(url);
      const multi = `postgres://${real.username}@127.0.0.1:${closedPort},${real.host}${real.pathname}?target_session_attrs=read-write`;
      const pool = poolFor(multi);
      const client = await pool.connect();
      await client.query('INSERT INTO marks VALUES (3)');
      client.release();
      const [x, y] = [await pool.connect(), await pool.connect()];
      await x.query('SELECT 1');
      await y.query('SELECT 1');
      x.release();
      y.release();
    });

    it("gives up a host that accepts and never answers at pg-pool's connect timeout, before a later deadline", async () => {
      const sockets = new Set<Socket>();
      const { server: silent, port } = await loopbackHost((socket) => sockets.add(socket));
      try {
        const pool = poolFor(`postgres://app@127.0.0.1:${port}/db`, {
          connectionTimeoutMillis: 300,
        });
        const started = Date.now();
        const failure: unknown = await withDeadline(Date.now() + 60_000, () =>
          pool.connect(),
        ).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(NoConnectionError);
        expect((failure as Error).message).toContain('connection timeout');
        expect(Date.now() - started).toBeLessThan(20_000);
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });

    it('keeps the gate place of a checkout given up at its deadline until its connection has come', async () => {
      // A host that makes each connection wait until the test lets it through to PostgreSQL.
      let letThrough = (): void => {};
      const through = new Promise<void>((resolve) => (letThrough = resolve));
      const real = new URL(url);
      const sockets = new Set<Socket>();
      const { server: slow, port } = await loopbackHost((socket) => {
        sockets.add(socket);
        socket.on('error', () => undefined);
        void through.then(() => {
          const upstream = connect(Number(real.port || 5432), real.hostname);
          upstream.on('error', () => undefined);
          sockets.add(upstream);
          socket.pipe(upstream).pipe(socket);
        });
      });
      try {
        const pool = poolFor(`postgres://${real.username}@127.0.0.1:${port}${real.pathname}`, {
          max: 1,
          fairShare: true,
          connectionTimeoutMillis: 60_000,
        });
        await expect(
          withDeadline(Date.now() + 200, () => pool.connect(), 'alice'),
        ).rejects.toMatchObject({ name: 'DeadlineExceededError' });
        // Alice's connection is still being made: bob waits for it at the gate, where a
        // freed connection goes to the party holding the fewest, not in pg-pool's queue.
        const bob = withDeadline(Date.now() + 30_000, () => pool.connect(), 'bob');
        await nextMacrotask();
        expect(pool.waitingCount).toBe(0);
        letThrough();
        const client = await bob;
        await client.query('SELECT 1');
        client.release();
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => slow.close(() => resolve()));
      }
    });

    it('fails with NoConnectionError when no host can be reached', async () => {
      const pool = poolFor(`postgres://app@127.0.0.1:${closedPort},127.0.0.1:${closedPort}/db`);
      await expect(pool.connect()).rejects.toBeInstanceOf(NoConnectionError);
    });
  });
});
