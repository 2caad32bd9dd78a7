import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OwnerRequests } from '../src/auth/owner-requests.js';
import { TokensService } from '../src/auth/tokens.service.js';
import { PlantsService } from '../src/plants/plants.service.js';
import { eventually } from './support/eventually.js';
import { expectError } from './support/expect-error.js';
import { listen } from './support/listen.js';
import { runSql } from './support/seed.js';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';

const BOUND = 2;
/** Plants of 255-character names and tags: some 10 MB of JSON, more than loopback buffers hold. */
const BIG_LIST = 20_000;

/** A full list that its client starts to read and then never reads again. */
function stalledList(url: string, auth: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(`GET /plants HTTP/1.1\r\nhost: x\r\nauthorization: ${auth}\r\n\r\n`),
    );
    socket.once('error', reject);
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      if (chunk.toString('latin1').startsWith('HTTP/1.1 200')) resolve(socket);
      else reject(new Error(`the list answered ${chunk.toString('latin1').slice(0, 200)}`));
    });
  });
}

describe.each(databaseKinds())("each owner's requests in flight, on %s", (kind) => {
  const t = useTestApp(kind, { FAIR_SHARE_MAX_IN_FLIGHT: String(BOUND) });
  const sockets: Socket[] = [];
  let url: string;
  beforeAll(async () => {
    url = await listen(t.current);
  });
  afterAll(() => sockets.forEach((socket) => socket.destroy()));

  /** Raw HTTP on a connection of its own, which the test will cut (its errors are expected). */
  const openRequest = (text: string): Socket => {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname, () => socket.write(text));
    socket.on('error', () => undefined);
    return socket;
  };

  /** The status `request` answers once it is no longer a 429: once the owner's places are free. */
  async function statusOnceFree(
    request: () => PromiseLike<{ status: number }>,
    taken: string,
    timeoutMs?: number,
  ) {
    let status = 429;
    await eventually(async () => (status = (await request()).status) !== 429, taken, timeoutMs);
    return status;
  }

  it('are bounded: past the bound a 429 with Retry-After, other owners unaffected, the places free again once the lists end', async () => {
    const busy = await t.current.newCaller();
    const other = await t.current.newCaller();
    await runSql(t.current.database, {
      sqlite: [
        `INSERT INTO plants (owner, id, name, tag)
         WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < ?)
         SELECT ?, x, substr(hex(zeroblob(128)), 1, 255), substr(hex(zeroblob(128)), 1, 255) FROM seq`,
        [BIG_LIST, busy.owner],
      ],
      postgres: [
        `INSERT INTO plants (owner, id, name, tag)
         SELECT $1, x, repeat('n', 255), repeat('t', 255) FROM generate_series(1, $2::int) AS x`,
        [busy.owner, BIG_LIST],
      ],
    });
    const list = (auth: string) =>
      t.current.http().get('/plants?limit=1').set('Authorization', auth);

    for (let i = 0; i < BOUND; i++) sockets.push(await stalledList(url, busy.auth));
    const refused = await list(busy.auth);
    expectError(refused, 429, /too many requests in flight for this owner \(at most 2 at once\)/);
    expect(refused.headers['retry-after']).toBe('1');
    expect((await list(other.auth)).status).toBe(200);
    const metrics = await t.current.http().get('/metrics');
    expect(metrics.text).toMatch(/^fair_share_refusals_total 1$/m);

    // A client that hangs up ends its request: its place is free again.
    sockets.forEach((socket) => socket.destroy());
    expect(
      await statusOnceFree(
        () => list(busy.auth),
        'the places of the closed lists are still taken',
        10_000,
      ),
    ).toBe(200);
  });

  it.each([
    ['a list', 'GET /plants HTTP/1.1\r\n'],
    // Its body never comes whole: a handler would never start, nor answer.
    [
      'a create half-way through its body',
      'POST /plants HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n',
    ],
  ])(
    'gives back the place of %s whose client hangs up while its token is looked up',
    async (_, head) => {
      const caller = await t.current.newCaller();
      // A slow token lookup, as on a busy database: the clients give up during it.
      // The n-th lookup ends once the server has seen the n-th connection hang up.
      const server = t.current.app.getHttpServer();
      const hungUp: Promise<void>[] = [];
      const onConnection = (socket: Socket) =>
        hungUp.push(
          new Promise((resolve) => {
            socket.once('end', () => resolve());
            socket.once('close', () => resolve());
          }),
        );
      server.on('connection', onConnection);
      const tokens = t.current.app.get(TokensService);
      const callerOf = tokens.callerOf;
      const lookups: Promise<unknown>[] = [];
      tokens.callerOf = (...args) => {
        const lookup = hungUp[lookups.length].then(() => callerOf.apply(tokens, args));
        lookups.push(lookup);
        return lookup;
      };
      try {
        for (let i = 0; i < BOUND + 1; i++) {
          const started = lookups.length;
          const socket = openRequest(
            `${head}host: x\r\nauthorization: ${caller.auth}\r\n\r\n${head.startsWith('POST') ? '{"id": 1,' : ''}`,
          );
          // Hung up once its lookup has begun.
          while (lookups.length === started) await new Promise((resolve) => setImmediate(resolve));
          socket.destroy();
        }
        // Every lookup ends after its client has gone; then the authentication step goes on.
        await Promise.allSettled(lookups);
        await new Promise((resolve) => setImmediate(resolve));
      } finally {
        tokens.callerOf = callerOf;
        server.off('connection', onConnection);
      }
      // Gone before their handlers started: their places come back, and they are not handled.
      const list = () => t.current.http().get('/plants?limit=1').set('Authorization', caller.auth);
      expect(await statusOnceFree(list, 'the places of the hung-up requests are still taken')).toBe(
        200,
      );
    },
  );

  it('keeps counting a request whose client hung up until its handler has answered', async () => {
    const caller = await t.current.newCaller();
    const server = t.current.app.getHttpServer();
    const closed: Promise<void>[] = [];
    const onConnection = (socket: Socket) =>
      closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
    server.on('connection', onConnection);
    // Lists whose handlers wait (as on a slow database) until the test lets them go on.
    const plants = t.current.app.get(PlantsService);
    const list = plants.list;
    let letThrough!: () => void;
    const held = new Promise<void>((resolve) => (letThrough = resolve));
    let started = 0;
    plants.list = async (...args) => {
      started += 1;
      await held;
      return list.apply(plants, args);
    };
    const getOne = () => t.current.http().get('/plants/1').set('Authorization', caller.auth);
    try {
      for (let i = 0; i < BOUND; i++) {
        const socket = openRequest(
          `GET /plants HTTP/1.1\r\nhost: x\r\nauthorization: ${caller.auth}\r\n\r\n`,
        );
        await eventually(() => started === i + 1, 'the list handler did not start');
        socket.destroy();
      }
      // The server has seen both clients go; their handlers are still waiting.
      await Promise.all(closed);
      expectError(await getOne(), 429, /too many requests in flight for this owner/);
    } finally {
      letThrough();
      plants.list = list;
      server.off('connection', onConnection);
    }
    expect(await statusOnceFree(getOne, 'the places of the answered lists are still taken')).toBe(
      404,
    );
  });

  it('gives back the place of a create whose client hung up half-way through its body', async () => {
    const caller = await t.current.newCaller();
    const getOne = () => t.current.http().get('/plants/1').set('Authorization', caller.auth);
    // The creates' admissions, seen where they happen: a GET sent to learn whether they were
    // counted would race them, and, counted between the two, take the second one's place.
    const ownerRequests = t.current.app.get(OwnerRequests);
    const admit = ownerRequests.admit;
    let admitted = 0;
    ownerRequests.admit = (...args) => {
      const refusal = admit.apply(ownerRequests, args);
      if (refusal === undefined && args[0] === caller.owner) admitted += 1;
      return refusal;
    };
    const creates = Array.from({ length: BOUND }, () => {
      const socket = openRequest(
        `POST /plants HTTP/1.1\r\nhost: x\r\nauthorization: ${caller.auth}\r\n` +
          'content-type: application/json\r\ncontent-length: 100\r\n\r\n{"id": 1,',
      );
      const create = { socket, answer: '' };
      socket.on('data', (chunk: Buffer) => (create.answer += chunk.toString('latin1')));
      return create;
    });
    try {
      // Both authenticated and counted, waiting for the rest of their bodies, unanswered. The
      // wait is shorter than the test's own timeout, so that a failure says what it saw.
      await eventually(
        () => admitted === BOUND,
        () =>
          `${admitted} of the creates were counted; they were answered ` +
          creates.map(({ answer }) => JSON.stringify(answer.slice(0, 300))).join(' and '),
        12_000,
      );
    } finally {
      ownerRequests.admit = admit;
    }
    expect(creates.map(({ answer }) => answer)).toEqual(Array<string>(BOUND).fill(''));
    expectError(await getOne(), 429, /too many requests in flight for this owner/);
    creates.forEach(({ socket }) => socket.destroy());
    expect(
      await statusOnceFree(
        getOne,
        'the places of the creates cut off mid-body are still taken',
        12_000,
      ),
    ).toBe(404);
  });
});
