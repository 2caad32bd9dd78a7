import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBetterSqlite3 } from '../src/database/better-sqlite3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShutdownState } from '../src/lifecycle/shutdown-state.js';
import { eventually } from './support/eventually.js';
import { expectError } from './support/expect-error.js';
import { plantsClient } from './support/plants-client.js';
import { seedPlants } from './support/seed.js';
import { killHard, startService } from './support/service-process.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { useTestApp } from './support/test-app.js';

const TOKEN = 'pst_operations-test-token-0123456789abcdefghij';
const auth = { Authorization: `Bearer ${TOKEN}` };

interface LogLine {
  level: number;
  msg?: string;
  owner?: string;
  responseTime?: number;
  req?: { id: string; method: string; url: string; route?: string };
  res?: { statusCode: number };
  err?: { stack?: string };
  context?: string;
}

const logLines = (output: string): LogLine[] =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

describe.each(databaseKinds())('metrics and readiness on %s', (kind) => {
  const t = useTestApp(kind);

  it('serves Prometheus metrics: request durations by route, plant counters, process metrics', async () => {
    const plants = plantsClient(t.current, (await t.current.newCaller()).auth);
    const before = (await t.current.http().get('/metrics')).text;
    const counter = (text: string, name: string) =>
      Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1]);
    await plants.create({ id: 1, name: 'Fern' });
    await plants.create({ id: 1, name: 'Fern' }); // a replay creates nothing
    await plants.remove(1);
    await plants.list();
    const response = await t.current.http().get('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(
      counter(response.text, 'plants_created_total') - counter(before, 'plants_created_total'),
    ).toBe(1);
    expect(
      counter(response.text, 'plants_deleted_total') - counter(before, 'plants_deleted_total'),
    ).toBe(1);
    expect(response.text).toMatch(
      /http_request_duration_seconds_bucket\{le="[^"]+",method="GET",route="\/plants",status="200"\}/,
    );
    expect(response.text).toMatch(
      /http_request_duration_seconds_count\{method="DELETE",route="\/plants\/:id",status="204"\} \d+/,
    );
    expect(response.text).toMatch(/^process_resident_memory_bytes \d+/m);
    if (kind === 'postgres') expect(response.text).toMatch(/^db_pool_connections_total \d+/m);
  });

  it('turns readiness false as soon as shutdown begins; liveness stays up', async () => {
    expect((await t.current.http().get('/health/ready')).status).toBe(200);
    t.current.app.get(ShutdownState).begin();
    const response = await t.current.http().get('/health/ready');
    expectError(response, 503, /shutting down/);
    expect((await t.current.http().get('/health/live')).status).toBe(200);
  });
});

describe('metrics switched off', () => {
  const t = useTestApp('sqlite', { METRICS_ENABLED: 'false' });

  it('has no /metrics route', async () => {
    expectError(await t.current.http().get('/metrics'), 404);
    const plants = plantsClient(t.current, (await t.current.newCaller()).auth);
    expect((await plants.create({ id: 1, name: 'Fern' })).status).toBe(200);
  });
});

describe('the running service (node dist/bundle/main.js)', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'plant-store-ops-'));
  });
  afterAll(async () => rm(cwd, { recursive: true, force: true }));

  it('logs one JSON line per request with id, route, status, latency and owner; never a token; 5xx with their cause', async () => {
    const database = await createTestDatabase('sqlite');
    const service = await startService(cwd, {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      DATABASE_URL: database.url,
      BOOTSTRAP_TOKEN: TOKEN,
    });
    try {
      const call = (path: string, init: RequestInit = {}) => fetch(service.url + path, init);
      const listed = await call('/plants', { headers: { ...auth, 'X-Request-Id': 'ops-req-1' } });
      expect(listed.headers.get('x-request-id')).toBe('ops-req-1');
      await call('/plants', {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: '{"id": 7, "name": "Fern"}',
      });
      await call('/plants/7', { method: 'DELETE', headers: auth });
      await call(`/plants?access_token=${TOKEN}`);
      await call('/plants', { headers: { Authorization: `Bearer ${TOKEN}x` } });
      const file = new (loadBetterSqlite3())(database.url.slice('sqlite:'.length));
      file.exec('ALTER TABLE plants RENAME TO plants_away');
      const failed = await call('/plants', { headers: auth });
      file.exec('ALTER TABLE plants_away RENAME TO plants');
      file.close();
      expect(failed.status).toBe(500);
      // The log lines reach the pipe a little after the answers: the last request's are the last.
      await eventually(
        () =>
          /"statusCode":500/.test(service.output()) &&
          /"context":"HttpError"/.test(service.output()),
        'the log lines of the 500',
        5000,
      );

      const output = service.output();
      expect(output).not.toContain(TOKEN);
      expect(output).not.toContain(TOKEN.slice(4));
      expect(output).not.toMatch(/Bearer /);
      const lines = logLines(output);
      const first = lines.find((line) => line.req?.id === 'ops-req-1');
      expect(first).toMatchObject({
        req: { method: 'GET', url: '/plants', route: '/plants' },
        res: { statusCode: 200 },
        owner: 'demo',
      });
      expect(typeof first?.responseTime).toBe('number');
      const deleted = lines.find((line) => line.req?.method === 'DELETE');
      expect(deleted).toMatchObject({
        req: { route: '/plants/:id' },
        res: { statusCode: 204 },
        owner: 'demo',
      });
      expect(deleted?.req?.id).toMatch(/^[0-9a-f-]{36}$/);
      const viaQuery = lines.find((line) => line.req?.url.includes('access_token'));
      expect(viaQuery?.req?.url).toBe('/plants?access_token=%5BREDACTED%5D');
      expect(viaQuery?.res?.statusCode).toBe(401);
      const cause = lines.find((line) => line.context === 'HttpError');
      expect(cause?.err?.stack ?? '').toMatch(/no such table/);
      const failedLine = lines.find((line) => line.res?.statusCode === 500);
      expect(failedLine?.level).toBe(50);
    } finally {
      await killHard(service);
      await database.drop();
    }
  });

  describe.each(databaseKinds())('graceful shutdown on %s', (kind) => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase(kind);
    });
    afterAll(async () => database.drop());

    it('on SIGTERM drains (not ready, serving with Connection: close), answers every request in flight, refuses new ones, and exits 0', async () => {
      const service = await startService(cwd, {
        NODE_ENV: 'production',
        DATABASE_URL: database.url,
        BOOTSTRAP_TOKEN: TOKEN,
        SHUTDOWN_DRAIN_MS: '1500',
      });
      const count = 40_000;
      await seedPlants(database, 'demo', count);
      const exited = new Promise<number | null>((resolve) => service.child.once('exit', resolve));
      // Slow-ish requests: each streams a list of 40,000 plants.
      const inFlight = await Promise.all(
        Array.from({ length: 6 }, () => fetch(`${service.url}/plants`, { headers: auth })),
      );
      const signalled = Date.now();
      service.child.kill('SIGTERM');
      // The drain: a balancer sees the instance not ready, while it still serves
      // new requests, closing each connection after its answer.
      await eventually(
        () => /SIGTERM received: not ready/.test(service.output()),
        'the line that says the drain began',
        5000,
      );
      expect((await fetch(`${service.url}/health/ready`)).status).toBe(503);
      const during = await fetch(`${service.url}/plants?limit=1`, { headers: auth });
      expect(during.status).toBe(200);
      expect(during.headers.get('connection')).toBe('close');
      expect(await during.json()).toEqual([{ name: 'plant 1' }]);
      const bodies = await Promise.all(
        inFlight.map(async (r) => ({ status: r.status, body: await r.text() })),
      );
      for (const { status, body } of bodies) {
        expect(status).toBe(200);
        const plants = JSON.parse(body) as Array<{ name: string }>;
        expect(plants).toHaveLength(count);
        expect(plants[count - 1]).toEqual({ name: `plant ${count}` });
      }
      expect(await exited).toBe(0);
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(1500);
      expect(service.output()).toMatch(/"context":"Shutdown","msg":"SIGTERM received/);
      expect(service.output()).toMatch(/"context":"Shutdown","msg":"stopped cleanly"/);
      await expect(fetch(`${service.url}/health/live`)).rejects.toThrow();
    });
  });
});
