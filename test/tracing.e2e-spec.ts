import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBetterSqlite3 } from '../src/database/better-sqlite3.js';
import {
  OtlpReceiver,
  type ReceivedSpan,
  SPAN_KIND,
  STATUS_CODE,
} from './support/otlp-receiver.js';
import { killHard, type ServiceProcess, startService } from './support/service-process.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { startReceiver } from './support/webhook-receiver.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';

const TOKEN = `pst_tracing-test-${randomBytes(16).toString('hex')}`;
const AUTH = { Authorization: `Bearer ${TOKEN}` };

/**
 * A module for NODE_OPTIONS=--import (loaded before the service's own preload)
 * that writes the URL of every module the ESM loader resolves to a file: how
 * a test sees which modules the service loaded.
 */
async function importRecorder(
  dir: string,
): Promise<{ nodeOptions: string; loaded(): Promise<string> }> {
  const file = join(dir, 'imports.txt');
  await writeFile(file, '');
  await writeFile(
    join(dir, 'record-hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
let file;
export async function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(file, result.url + '\\n');
  return result;
}
`,
  );
  await writeFile(
    join(dir, 'record-imports.mjs'),
    `import { register } from 'node:module';
register('./record-hooks.mjs', import.meta.url, { data: { file: ${JSON.stringify(file)} } });
`,
  );
  return {
    nodeOptions: `--import=${join(dir, 'record-imports.mjs')}`,
    loaded: () => readFile(file, 'utf8'),
  };
}

const randomHex = (bytes: number) => randomBytes(bytes).toString('hex');

/** The service's JSON log lines. */
const logLines = (service: ServiceProcess): Array<Record<string, unknown>> =>
  service
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** The span and its parents up to the root, as far as they were received. */
function ancestry(span: ReceivedSpan, spans: ReceivedSpan[]): ReceivedSpan[] {
  const chain = [span];
  for (let parent = span.parentSpanId; parent !== undefined;) {
    const next = spans.find((s) => s.spanId === parent && s.traceId === span.traceId);
    if (!next) break;
    chain.push(next);
    parent = next.parentSpanId;
  }
  return chain;
}

const serverSpan = (spans: ReceivedSpan[], traceId: string, name: string) =>
  spans.find((s) => s.traceId === traceId && s.kind === SPAN_KIND.SERVER && s.name === name);

describe.each(databaseKinds())('tracing with OpenTelemetry on %s', (kind) => {
  const dbSystem = kind === 'sqlite' ? 'sqlite' : 'postgresql';
  let database: TestDatabase;
  let cwd: string;
  let proxy: TcpProxy | undefined;
  let databaseUrl: string;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    cwd = await mkdtemp(join(tmpdir(), 'plant-store-tracing-'));
    databaseUrl = database.url;
    if (kind === 'postgres') {
      // Through a proxy the test can cut, to play a database outage.
      const target = new URL(database.url);
      proxy = await new TcpProxy(target.hostname, Number(target.port || 5432)).start();
      target.host = `127.0.0.1:${proxy.port}`;
      databaseUrl = target.toString();
    }
  });
  afterAll(async () => {
    await proxy?.stop();
    await database?.drop();
    await rm(cwd, { recursive: true, force: true });
  });

  const baseEnv = () => ({
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    BOOTSTRAP_TOKEN: TOKEN,
    DB_STATEMENT_TIMEOUT_MS: '1000',
    DB_CONNECT_TIMEOUT_MS: '1000',
  });

  describe('on, exporting OTLP/HTTP JSON', () => {
    const receiver = new OtlpReceiver();
    let service: ServiceProcess;
    let recorder: Awaited<ReturnType<typeof importRecorder>>;

    beforeAll(async () => {
      await receiver.start();
      recorder = await importRecorder(await mkdtemp(join(cwd, 'on-')));
      service = await startService(cwd, {
        ...baseEnv(),
        NODE_OPTIONS: recorder.nodeOptions,
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
        // Webhook receivers here are on 127.0.0.1 over http; one quick retry.
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_POLL_INTERVAL_MS: '50',
        WEBHOOK_RETRY_SCHEDULE: '100ms',
      });
    });
    afterAll(async () => {
      if (service) await killHard(service);
      await receiver.stop();
    });

    it('continues the caller trace: a server span GET /plants, database spans beneath it, ids in the log line', async () => {
      const created = await fetch(`${service.url}/plants`, {
        method: 'POST',
        headers: { ...AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify({ id: 7, name: 'Fern' }),
      });
      expect(created.status).toBe(200);

      const traceId = randomHex(16);
      const callerSpanId = randomHex(8);
      const listed = await fetch(`${service.url}/plants?limit=5`, {
        headers: { ...AUTH, traceparent: `00-${traceId}-${callerSpanId}-01` },
      });
      expect(listed.status).toBe(200);
      expect(await listed.json()).toEqual([{ name: 'Fern' }]);

      const server = await receiver.waitFor((spans) => serverSpan(spans, traceId, 'GET /plants'));
      expect(server.parentSpanId).toBe(callerSpanId);
      expect(server.scope).toBe('@opentelemetry/instrumentation-http');
      expect(server.status.code).toBe(STATUS_CODE.UNSET);
      expect(server.attributes).toMatchObject({
        'http.request.method': 'GET',
        'http.route': '/plants',
        'http.response.status_code': 200,
        'url.scheme': 'http',
        'url.path': '/plants',
        'url.query': 'limit=5',
        'server.address': '127.0.0.1',
      });
      expect(server.resource['service.name']).toBe('plant-store');

      // The list query, in the same trace and beneath the server span.
      const query = await receiver.waitFor((spans) =>
        spans.find(
          (s) =>
            s.traceId === traceId &&
            s.kind === SPAN_KIND.CLIENT &&
            s.attributes['db.system.name'] === dbSystem &&
            String(s.attributes['db.query.text']).includes('FROM "plants"'),
        ),
      );
      const chain = ancestry(query, receiver.trace(traceId));
      expect(chain.map((s) => s.spanId)).toContain(server.spanId);
      expect(chain.at(-1)!.spanId).toBe(server.spanId);
      expect(query.attributes['db.query.text']).toMatch(/WHERE "p"\."owner" = (\?|\$1)/);

      // The request's log line carries the trace and the server span.
      const line = logLines(service).find(
        (l) => l.msg === 'request completed' && l.trace_id === traceId,
      );
      expect(line).toMatchObject({
        trace_id: traceId,
        span_id: server.spanId,
        req: { method: 'GET', route: '/plants' },
        res: { statusCode: 200 },
      });

      // Without a traceparent, a request starts a trace of its own.
      expect((await fetch(`${service.url}/plants`, { headers: AUTH })).status).toBe(200);
      const root = await receiver.waitFor((spans) =>
        spans.find(
          (s) =>
            s.kind === SPAN_KIND.SERVER &&
            s.name === 'GET /plants' &&
            s.parentSpanId === undefined &&
            s.attributes['url.query'] === undefined,
        ),
      );
      expect(root.traceId).not.toBe(traceId);

      expect(await recorder.loaded()).toContain('/node_modules/@opentelemetry/sdk-node/');
    });

    it('records a 4xx with its status, and a 5xx as an error with the database error beneath it', async () => {
      const traceId = randomHex(16);
      const missing = await fetch(`${service.url}/plants/404404`, {
        method: 'DELETE',
        headers: { ...AUTH, traceparent: `00-${traceId}-${randomHex(8)}-01` },
      });
      expect(missing.status).toBe(404);
      const notFound = await receiver.waitFor((spans) =>
        serverSpan(spans, traceId, 'DELETE /plants/:id'),
      );
      expect(notFound.attributes['http.response.status_code']).toBe(404);
      expect(notFound.attributes['http.route']).toBe('/plants/:id');
      // A 4xx is the client's error, not the server's: the span status stays unset.
      expect(notFound.status.code).toBe(STATUS_CODE.UNSET);

      const failedTrace = randomHex(16);
      const failed = await withDatabaseOutage(() =>
        fetch(`${service.url}/plants`, {
          method: 'POST',
          headers: {
            ...AUTH,
            'Content-Type': 'application/json',
            traceparent: `00-${failedTrace}-${randomHex(8)}-01`,
          },
          body: JSON.stringify({ id: 8, name: 'Ivy' }),
        }),
      );
      expect(failed.status).toBe(503);
      const errored = await receiver.waitFor((spans) =>
        serverSpan(spans, failedTrace, 'POST /plants'),
      );
      expect(errored.status.code).toBe(STATUS_CODE.ERROR);
      expect(errored.attributes).toMatchObject({
        'http.response.status_code': 503,
        'error.type': '503',
      });
      const cause = await receiver.waitFor((spans) =>
        spans.find(
          (s) =>
            s.traceId === failedTrace &&
            s.kind === SPAN_KIND.CLIENT &&
            s.status.code === STATUS_CODE.ERROR &&
            s.events.some((e) => e.name === 'exception'),
        ),
      );
      expect(ancestry(cause, receiver.trace(failedTrace)).at(-1)!.spanId).toBe(errored.spanId);
    });

    /** Runs `request` while the database cannot answer: locked (SQLite) or unreachable (PostgreSQL). */
    async function withDatabaseOutage(request: () => Promise<Response>): Promise<Response> {
      if (proxy) {
        proxy.cut();
        try {
          return await request();
        } finally {
          proxy.restore();
        }
      }
      const locker = new (loadBetterSqlite3())(database.url.slice('sqlite:'.length));
      try {
        locker.exec('BEGIN EXCLUSIVE');
        const response = await request();
        locker.exec('COMMIT');
        return response;
      } finally {
        locker.close();
      }
    }

    it('sends each webhook attempt as a client span linked to the create, with no secret or signature', async () => {
      // Subscribed here: the creates of the tests before this one sent nothing.
      const caller = AUTH;
      // The first attempt fails (503), the retry is delivered.
      const webhooks = await startReceiver((n) => (n === 1 ? 503 : 200));
      try {
        const subscribed = await fetch(`${service.url}/webhooks`, {
          method: 'POST',
          headers: { ...caller, 'Content-Type': 'application/json' },
          body: JSON.stringify({ url: `${webhooks.url}/hooks?tenant=plants` }),
        });
        expect(subscribed.status, await subscribed.clone().text()).toBe(201);
        const { secret } = (await subscribed.json()) as { secret: string };

        const traceId = randomHex(16);
        const created = await fetch(`${service.url}/plants`, {
          method: 'POST',
          headers: {
            ...caller,
            'Content-Type': 'application/json',
            traceparent: `00-${traceId}-${randomHex(8)}-01`,
          },
          body: '{"id":9007199254740993,"name":"Traced"}',
        });
        expect(created.status).toBe(200);
        const [first, second] = await webhooks.waitFor(2, 10_000);
        expect(second.body).toBe('{"id":9007199254740993,"name":"Traced"}');
        // The receiver gets no trace header of the service's.
        expect(first.headers.traceparent).toBeUndefined();
        const eventId = String(first.headers['webhook-id']);

        const create = await receiver.waitFor((spans) =>
          serverSpan(spans, traceId, 'POST /plants'),
        );
        const deliveries = await receiver.waitFor((spans) => {
          const found = spans.filter(
            (s) => s.kind === SPAN_KIND.CLIENT && s.attributes['webhook.id'] === eventId,
          );
          return found.length === 2 ? found : undefined;
        });
        deliveries.sort(
          (a, b) =>
            Number(a.attributes['http.response.status_code']) -
            Number(b.attributes['http.response.status_code']),
        );
        const [delivered, refused] = deliveries;
        for (const span of deliveries) {
          // A trace of its own, linked to the create's.
          expect(span.traceId).not.toBe(traceId);
          expect(span.parentSpanId).toBeUndefined();
          expect(span.links.map((l) => l.traceId)).toEqual([traceId]);
          expect(span.attributes).toMatchObject({
            'http.request.method': 'POST',
            'server.address': '127.0.0.1',
            'url.full': `${webhooks.url}/hooks`,
          });
        }
        expect(delivered.attributes['http.response.status_code']).toBe(200);
        expect(delivered.status.code).toBe(STATUS_CODE.UNSET);
        expect(refused.attributes['http.response.status_code']).toBe(503);
        expect(refused.status.code).toBe(STATUS_CODE.ERROR);
        expect(create.traceId).toBe(traceId);

        const signatures = [first, second].map((r) => String(r.headers['webhook-signature']));
        const key = secret.replace(/^whsec_/, '');
        for (const span of receiver.spans) {
          const exported = JSON.stringify([span.attributes, span.events, span.links]);
          expect(exported).not.toContain(key);
          for (const signature of signatures) {
            expect(exported).not.toContain(signature.replace(/^v1,/, ''));
          }
          expect(exported).not.toContain('tenant=plants');
        }
      } finally {
        await webhooks.close();
      }
    });

    it('puts no token in any exported attribute, and redacts token query parameters', async () => {
      const traceId = randomHex(16);
      const response = await fetch(`${service.url}/plants?limit=1&access_token=${TOKEN}`, {
        headers: { ...AUTH, traceparent: `00-${traceId}-${randomHex(8)}-01` },
      });
      expect(response.status).toBe(400);
      const server = await receiver.waitFor((spans) => serverSpan(spans, traceId, 'GET /plants'));
      expect(server.attributes['url.query']).toBe('limit=1&access_token=REDACTED');

      expect(receiver.spans.length).toBeGreaterThan(10);
      for (const span of receiver.spans) {
        const exported = JSON.stringify([span.attributes, span.events, span.links, span.resource]);
        expect(exported).not.toContain(TOKEN);
        expect(exported.toLowerCase()).not.toContain('bearer');
        expect(Object.keys(span.attributes).join(' ')).not.toMatch(/authorization|cookie/i);
      }
    });
  });

  it('off (OTEL_TRACES_EXPORTER=none, even with an endpoint): no SDK loaded, nothing exported, no ids in logs', async () => {
    const receiver = await new OtlpReceiver().start();
    const recorder = await importRecorder(await mkdtemp(join(cwd, 'off-')));
    const service = await startService(cwd, {
      ...baseEnv(),
      NODE_OPTIONS: recorder.nodeOptions,
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    try {
      const traceId = randomHex(16);
      const listed = await fetch(`${service.url}/plants`, {
        headers: { ...AUTH, traceparent: `00-${traceId}-${randomHex(8)}-01` },
      });
      expect(listed.status).toBe(200);
      // Stopped: with tracing on, the SDK would flush what it holds on SIGTERM (as below).
      const exited = new Promise((resolve) => service.child.once('exit', resolve));
      service.child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(receiver.requests).toEqual([]);

      const loaded = await recorder.loaded();
      expect(loaded).toContain('/dist/tracing/preload.js');
      expect(loaded).toContain('/dist/bundle/main.js');
      expect(loaded).not.toContain('/@opentelemetry/');
      expect(loaded).not.toContain('/import-in-the-middle/');
      expect(loaded).not.toContain('/dist/tracing/start-tracing.js');

      const lines = logLines(service);
      expect(lines.some((l) => l.msg === 'request completed')).toBe(true);
      expect(lines.some((l) => 'trace_id' in l || 'span_id' in l)).toBe(false);
    } finally {
      await killHard(service);
      await receiver.stop();
    }
  });

  it('by the standard variables alone: OTLP protobuf by default, service name and resource, parent-based sampling, flushed on SIGTERM', async () => {
    const receiver = await new OtlpReceiver().start();
    // No OTEL_TRACES_EXPORTER and the SDK's own 5 s batch delay: the spans reach
    // the receiver only because the service flushes them when it stops.
    const service = await startService(cwd, {
      ...baseEnv(),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'plants-under-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=e2e',
    });
    try {
      const sampled = randomHex(16);
      const unsampled = randomHex(16);
      for (const [traceId, flags] of [
        [sampled, '01'],
        [unsampled, '00'],
      ]) {
        const response = await fetch(`${service.url}/plants`, {
          headers: { ...AUTH, traceparent: `00-${traceId}-${randomHex(8)}-${flags}` },
        });
        expect(response.status).toBe(200);
      }
      const exited = new Promise((resolve) => service.child.once('exit', resolve));
      service.child.kill('SIGTERM');
      expect(await exited).toBe(0);

      const exports = receiver.requests.filter((r) => r.path === '/v1/traces');
      expect(exports.length).toBeGreaterThan(0);
      expect(exports.every((r) => r.contentType === 'application/x-protobuf')).toBe(true);
      const body = Buffer.concat(exports.map((r) => r.body));
      // Trace ids are raw bytes in OTLP protobuf; strings are UTF-8.
      expect(body.includes(Buffer.from(sampled, 'hex'))).toBe(true);
      expect(body.includes(Buffer.from(unsampled, 'hex'))).toBe(false);
      expect(body.includes('plants-under-test')).toBe(true);
      expect(body.includes('deployment.environment.name')).toBe(true);
      expect(body.includes(TOKEN)).toBe(false);
    } finally {
      await killHard(service);
      await receiver.stop();
    }
  });
});

describe('tracing with the collector out of reach', () => {
  it('answers as usual, and still stops cleanly and promptly on SIGTERM', async () => {
    const database = await createTestDatabase('sqlite');
    const cwd = await mkdtemp(join(tmpdir(), 'plant-store-tracing-'));
    // A port that was just free: connections to it are refused.
    const closed = await new OtlpReceiver().start();
    await closed.stop();
    const service = await startService(cwd, {
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      BOOTSTRAP_TOKEN: TOKEN,
      OTEL_EXPORTER_OTLP_ENDPOINT: closed.url,
    });
    try {
      expect((await fetch(`${service.url}/plants`, { headers: AUTH })).status).toBe(200);
      const exited = new Promise((resolve) => service.child.once('exit', resolve));
      const started = Date.now();
      service.child.kill('SIGTERM');
      expect(await exited).toBe(0);
      // The flush gives up after 2 s; the exporter alone would retry for longer.
      expect(Date.now() - started).toBeLessThan(5000);
      expect(service.output()).not.toMatch(/shutdown failed/);
    } finally {
      await killHard(service);
      await database.drop();
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
