import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { expectError } from './support/expect-error.js';
import {
  type ClientOutcome,
  postWithNodeHttp,
  type RawAnswer,
  sendRaw,
  startUpload,
  type Target,
} from './support/raw-http.js';
import { databaseKinds } from './support/test-database.js';
import { type TestApp, useTestApp } from './support/test-app.js';

async function portOf(t: TestApp): Promise<number> {
  const server = t.app.getHttpServer();
  if (!server.listening) await t.app.listen(0, '127.0.0.1');
  return (server.address() as AddressInfo).port;
}

/**
 * The answer to a POST whose head announces `contentLength` bytes of body of
 * which none is ever sent: only a server that answers without reading the
 * body answers at all (else it waits for the body until the request timeout).
 */
async function answerWithoutBody(
  port: number,
  headers: string,
  contentLength: number,
  { method = 'POST', path = '/plants' }: Target = {},
): Promise<RawAnswer> {
  const head = `${method} ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${headers}`;
  const upload = startUpload(port, head, contentLength, 0);
  // A deadline, not a wait: no answer in 10 s, and the closed connection makes it { answered: false }.
  const deadline = setTimeout(() => upload.socket.destroy(), 10_000);
  const answer = await upload.answer;
  clearTimeout(deadline);
  upload.socket.destroy();
  return answer;
}

/** What the service read of the next connection made to it, once that connection is closed. */
function bytesReadOfNextConnection(t: TestApp): Promise<number> {
  const server = t.app.getHttpServer();
  return new Promise((resolve) =>
    server.once('connection', (socket: Socket) =>
      socket.once('close', () => resolve(socket.bytesRead)),
    ),
  );
}

/**
 * Resolves once the service starts reading the body of the next request it
 * gets: the body parser listens for the request's data (nothing before it does).
 */
function bodyReadOfNextRequest(t: TestApp): Promise<void> {
  const server = t.app.getHttpServer();
  return new Promise((resolve) =>
    server.prependOnceListener('request', (request: IncomingMessage) => {
      const on = request.on.bind(request);
      request.on = ((event: string, listener: (chunk: unknown) => void) => {
        if (event === 'data') resolve();
        return on(event as 'data', listener);
      }) as typeof request.on;
    }),
  );
}

/** A 1 MiB body, sent by Node's http client in one write; and what the service read of it. */
async function postMebibyte(
  t: TestApp,
  headers: Record<string, string>,
  target: Target = {},
): Promise<{ outcome: ClientOutcome; bytesRead: number }> {
  const bytesRead = bytesReadOfNextConnection(t);
  const outcome = await postWithNodeHttp(await portOf(t), headers, 1024 * 1024, target);
  return { outcome, bytesRead: await bytesRead };
}

/**
 * At most what the service reads of a request that authenticates no one, in
 * reads of 64 KiB: the head's, those Node makes while the token is looked up
 * (two on Node 24 while PostgreSQL answers), 64 KiB after the answer and the
 * read that went past it. A fraction of the 1 MiB sent.
 */
const UNAUTHENTICATED_READ_BYTES = 5 * 64 * 1024;

/** Requests that authenticate no one, by their Authorization header lines. */
const UNAUTHENTICATED = [
  ['no token', ''],
  ['an unknown token', 'authorization: Bearer pst_unknown\r\n'],
  ['a malformed Authorization header', 'authorization: Basic YTpi\r\n'],
];

/**
 * Requests for no route: an unknown path, `/plants/` (which matches no
 * route's id), a method a path does not have, an OPTIONS without CORS.
 */
const NO_ROUTE: [string, string][] = [
  ['POST', '/nope'],
  ['POST', '/plants/'],
  ['OPTIONS', '/plants'],
  ['DELETE', '/plants/'],
  ['PUT', '/plants/1'],
];

/** Requests Fastify's router refuses: a malformed URL (400), an over-long path parameter (414). */
const REFUSED_BY_ROUTER: [string, string, number][] = [
  ['POST', '/plants/%zz', 400],
  ['PUT', '/%E0%A4%A', 400],
  ['DELETE', `/plants/${'9'.repeat(200)}`, 414],
];

/** The 404 of a request for no route, in the Error shape, as any caller gets it. */
const notFound = (method: string, path: string) => ({
  error: 404,
  message: `Cannot ${method} ${path}`,
});

/** 60 KB of JSON that does not parse, within the body limit: a parser would have a go at it. */
const INVALID_JSON = `{${' '.repeat(60_000)}`;

const randomAddress = () => `10.${[1, 2, 3].map(() => randomBytes(1)[0]).join('.')}`;

describe.each(databaseKinds())('authentication before the body on %s', (kind) => {
  const t = useTestApp(kind);

  it.each(UNAUTHENTICATED)(
    'answers a request with %s without waiting for its body',
    async (_, headers) => {
      const answer = await answerWithoutBody(await portOf(t.current), headers, 60_000);
      expect(answer.answered && answer.status).toBe(401);
      expect(answer.answered && JSON.parse(answer.body)).toMatchObject({ error: 401 });
      expect(answer.answered && answer.headers['www-authenticate']).toMatch(
        /^Bearer realm="plants"/,
      );
    },
  );

  it.each([
    ['no token', {}],
    ['an unknown token', { authorization: 'Bearer pst_unknown' }],
  ])(
    'reads at most 64 KiB of a 1 MiB body sent with %s, and the client still reads the 401',
    async (_, headers) => {
      const { outcome, bytesRead } = await postMebibyte(t.current, headers);
      expect(outcome.status).toBe(401);
      expect(JSON.parse(outcome.body ?? '')).toMatchObject({ error: 401 });
      expect(bytesRead).toBeLessThanOrEqual(UNAUTHENTICATED_READ_BYTES);
    },
  );

  it.each(NO_ROUTE)(
    'answers %s %s without a token with its 404 without waiting for its body',
    async (method, path) => {
      const target = { method, path };
      const answer = await answerWithoutBody(await portOf(t.current), '', 60_000, target);
      expect(answer.answered && answer.status).toBe(404);
      expect(answer.answered && answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.answered && JSON.parse(answer.body)).toEqual(notFound(method, path));
    },
  );

  it.each(NO_ROUTE)(
    'answers %s %s without a token and with 60 KB of broken JSON with its 404, never parsing it',
    async (method, path) => {
      const response = await t.current
        .http()
        [method.toLowerCase() as 'post'](path)
        .set('Content-Type', 'application/json')
        .send(INVALID_JSON);
      expectError(response, 404);
      expect(response.body).toEqual(notFound(method, path));
    },
  );

  it.each(NO_ROUTE)(
    'reads at most 64 KiB of a 1 MiB body sent to %s %s without a token, and the client still reads the 404',
    async (method, path) => {
      const { outcome, bytesRead } = await postMebibyte(t.current, {}, { method, path });
      expect(outcome.status).toBe(404);
      expect(JSON.parse(outcome.body ?? '')).toEqual(notFound(method, path));
      expect(bytesRead).toBeLessThanOrEqual(UNAUTHENTICATED_READ_BYTES);
    },
  );

  it.each(REFUSED_BY_ROUTER)(
    'reads at most 64 KiB of a 1 MiB body sent to %s %s without a token, and the client still reads the %i',
    async (method, path, status) => {
      const { outcome, bytesRead } = await postMebibyte(t.current, {}, { method, path });
      expect(outcome.status).toBe(status);
      expect(JSON.parse(outcome.body ?? '')).toMatchObject({ error: status });
      expect(bytesRead).toBeLessThanOrEqual(UNAUTHENTICATED_READ_BYTES);
    },
  );

  it('answers an authenticated request for no route as before: its body read, then the same 404', async () => {
    const { auth } = await t.current.newCaller();
    const fastify = t.current.app.getHttpAdapter().getInstance();
    const post = (payload: string) =>
      fastify.inject({
        method: 'POST',
        url: '/nope',
        headers: { authorization: auth, 'content-type': 'application/json' },
        payload,
      });
    const found = await post('{"id": 1}');
    expect(found.statusCode).toBe(404);
    expect(found.json()).toEqual(notFound('POST', '/nope'));
    // Answered at the end of the pipeline, not before the body: the connection stays open.
    expect(found.headers.connection).toBe('keep-alive');
    // Its body is parsed, as any authenticated caller's.
    const broken = await post(INVALID_JSON);
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toMatchObject({ message: expect.stringMatching(/not valid JSON/) });
    // A token that is unknown authenticates no one: the 404 before the body.
    const unknown = await t.current
      .http()
      .post('/nope')
      .set('Authorization', 'Bearer pst_unknown')
      .set('Content-Type', 'application/json')
      .send(INVALID_JSON);
    expect(unknown.body).toEqual(notFound('POST', '/nope'));
  });

  it('waits for the body of an authenticated request (the answer above is not a shortcut for all)', async () => {
    const { auth } = await t.current.newCaller();
    const port = await portOf(t.current);
    const head = `POST /plants HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: ${auth}\r\n`;
    const body = '{"id": 1, "name": "fern"}';
    const reading = bodyReadOfNextRequest(t.current);
    const upload = startUpload(port, head, body.length, 0);
    // Authenticated, the service goes on to read the body, with no answer before it.
    const first = await Promise.race([
      reading.then(() => 'the service reads the body'),
      upload.answer.then((answer) => `an answer before the body: ${answer.raw}`),
    ]);
    expect(first).toBe('the service reads the body');
    upload.socket.write(body);
    const answer = await upload.answer;
    upload.socket.destroy();
    expect(answer.answered && answer.status).toBe(200);
  });

  it('answers 401 before 413 and 415', async () => {
    const tooLarge = await t.current
      .http()
      .post('/plants')
      .set('Content-Type', 'application/json')
      .send(`{"id": 1, "name": "${'x'.repeat(128 * 1024)}"}`);
    expectError(tooLarge, 401, /bearer token is required/);
    const announced = await answerWithoutBody(await portOf(t.current), '', 10 * 1024 * 1024);
    expect(announced.answered && announced.status).toBe(401);
    const wrongType = await t.current
      .http()
      .post('/plants')
      .set('Content-Type', 'text/plain')
      .send('id=1');
    expectError(wrongType, 401, /bearer token is required/);
  });

  it('takes bodies up to 64 KiB by default from an authenticated caller, and answers 413 past that', async () => {
    const { auth } = await t.current.newCaller();
    const padded = (size: number) => `{"id": 1, "name": "fern"${' '.repeat(size - 25)}}`;
    const within = await t.current
      .http()
      .post('/plants')
      .set('Authorization', auth)
      .set('Content-Type', 'application/json')
      .send(padded(64 * 1024));
    expect(within.status).toBe(200);
    const past = await t.current
      .http()
      .post('/plants')
      .set('Authorization', auth)
      .set('Content-Type', 'application/json')
      .send(padded(64 * 1024 + 1));
    expectError(past, 413);
  });

  it('keeps public routes public, the OpenAPI document included', async () => {
    expect((await t.current.http().get('/health/live')).status).toBe(200);
    expect((await t.current.http().get('/docs-json')).status).toBe(200);
  });

  it('refuses several Authorization headers with a 400, whichever comes first', async () => {
    const { auth } = await t.current.newCaller();
    const port = await portOf(t.current);
    for (const pair of [
      [auth, 'Bearer pst_other'],
      ['Bearer pst_other', auth],
    ]) {
      const answer = await sendRaw(
        port,
        Buffer.from(
          `GET /plants HTTP/1.1\r\nhost: x\r\nauthorization: ${pair[0]}\r\nAuthorization: ${pair[1]}\r\nconnection: close\r\n\r\n`,
        ),
      );
      expect(answer.answered && answer.status).toBe(400);
      expect(answer.answered && JSON.parse(answer.body)).toEqual({
        error: 400,
        message: 'send one Authorization header, not several',
      });
    }
  });
});

describe.each(databaseKinds())('the failure budget before the body on %s', (kind) => {
  const t = useTestApp(kind, { RATE_LIMIT_ENABLED: 'true', AUTH_FAILURE_LIMIT: '2' });

  it('answers a locked-out address with a 429 without waiting for its body, and reads at most 64 KiB of one', async () => {
    const port = await portOf(t.current);
    for (let i = 0; i < 2; i++) {
      const answer = await answerWithoutBody(port, `authorization: Bearer pst_guess${i}\r\n`, 10);
      expect(answer.answered && answer.status).toBe(401);
    }
    const { auth } = await t.current.newCaller();
    const answer = await answerWithoutBody(port, `authorization: ${auth}\r\n`, 10 * 1024 * 1024);
    expect(answer.answered && answer.status).toBe(429);
    expect(answer.answered && Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    const { outcome, bytesRead } = await postMebibyte(t.current, { authorization: auth });
    expect(outcome.status).toBe(429);
    expect(JSON.parse(outcome.body ?? '')).toMatchObject({ error: 429 });
    expect(bytesRead).toBeLessThanOrEqual(UNAUTHENTICATED_READ_BYTES);
  });
});

describe.each(databaseKinds())('the pace of refusals on %s', (kind) => {
  const DELAY_MS = 1500;
  const t = useTestApp(kind, {
    RATE_LIMIT_ENABLED: 'true',
    AUTH_REFUSAL_RATE: '1',
    AUTH_REFUSAL_DELAY_MS: String(DELAY_MS),
  });

  it('answers a refusal past the rate late, reading no more of its body, while an authenticated caller from the same address is answered at once', async () => {
    const port = await portOf(t.current);
    const { auth } = await t.current.newCaller();
    const first = await answerWithoutBody(port, '', 10);
    expect(first.answered && first.status).toBe(401);

    const sent = performance.now();
    let heldAnsweredAfter: number | undefined;
    const held = postMebibyte(t.current, {}).then((result) => {
      heldAnsweredAfter = performance.now() - sent;
      return result;
    });
    const list = await sendRaw(
      port,
      Buffer.from(
        `GET /plants HTTP/1.1\r\nhost: x\r\nauthorization: ${auth}\r\nconnection: close\r\n\r\n`,
      ),
    );
    expect(list.answered && list.status).toBe(200);
    expect(heldAnsweredAfter).toBeUndefined();

    const { outcome, bytesRead } = await held;
    expect(outcome.status).toBe(401);
    expect(JSON.parse(outcome.body ?? '')).toMatchObject({ error: 401 });
    // Timers never fire early; the margin is for rounding to whole milliseconds.
    expect(heldAnsweredAfter).toBeGreaterThanOrEqual(DELAY_MS - 5);
    expect(bytesRead).toBeLessThanOrEqual(UNAUTHENTICATED_READ_BYTES);
    const metrics = await t.current.http().get('/metrics');
    expect(metrics.text).toMatch(/^auth_refusals_held_total 1$/m);
  });

  /** Refusals held back so far (the tests above hold some too). */
  async function held(): Promise<number> {
    const metrics = await t.current.http().get('/metrics');
    return Number(/^auth_refusals_held_total (\d+)$/m.exec(metrics.text)?.[1]);
  }

  /** A request from `address` (with 60 KB of broken JSON unless told), and how long its answer took. */
  async function timed(
    method: string,
    url: string,
    address: string,
    { authorization, payload = INVALID_JSON }: { authorization?: string; payload?: string } = {},
  ) {
    const fastify = t.current.app.getHttpAdapter().getInstance();
    const sent = performance.now();
    const response = await fastify.inject({
      method: method as 'POST',
      url,
      remoteAddress: address,
      headers: {
        'content-type': 'application/json',
        ...(authorization ? { authorization } : {}),
      },
      payload,
    });
    return { response, tookMs: performance.now() - sent };
  }

  it.each(NO_ROUTE)(
    "holds back the 404 of %s %s without a token past the rate, as a 401, and never an authenticated caller's",
    async (method, path) => {
      const address = randomAddress();
      const { auth } = await t.current.newCaller();
      const before = await held();
      const first = await timed(method, path, address);
      expect(first.response.statusCode).toBe(404);
      const second = await timed(method, path, address);
      expect(second.response.statusCode).toBe(404);
      expect(second.response.json()).toEqual(notFound(method, path));
      // Timers never fire early; the margin is for rounding to whole milliseconds.
      expect(second.tookMs).toBeGreaterThanOrEqual(DELAY_MS - 5);
      expect(await held()).toBe(before + 1);
      // The same address with a valid token: the 404 of any caller, not held, not counted.
      const authenticated = await timed('POST', '/nope', address, {
        authorization: auth,
        payload: '{}',
      });
      expect(authenticated.response.statusCode).toBe(404);
      expect(await held()).toBe(before + 1);
    },
  );

  it.each(REFUSED_BY_ROUTER)(
    "holds back the router's refusal of %s %s without a token past the rate, and never an authenticated caller's",
    async (method, path, status) => {
      const address = randomAddress();
      const { auth } = await t.current.newCaller();
      const before = await held();
      expect((await timed(method, path, address)).response.statusCode).toBe(status);
      const second = await timed(method, path, address);
      expect(second.response.statusCode).toBe(status);
      expect(second.response.json()).toMatchObject({ error: status });
      // Timers never fire early; the margin is for rounding to whole milliseconds.
      expect(second.tookMs).toBeGreaterThanOrEqual(DELAY_MS - 5);
      expect(await held()).toBe(before + 1);
      const authenticated = await timed(method, path, address, { authorization: auth });
      expect(authenticated.response.statusCode).toBe(status);
      expect(await held()).toBe(before + 1);
    },
  );
});
