import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CursorList } from '../src/http/page-cursor.js';
import { cursorsWithSecret, testCursors } from './support/cursors.js';
import { expectError } from './support/expect-error.js';
import { cursorOf, nextLinkOf } from './support/page-links.js';
import { plantsClient } from './support/plants-client.js';
import { startApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { webhooksClient } from './support/webhooks-client.js';

const SHARED_SECRET = 'shared-cursor-secret-0123456789abcdef';
const OTHER_SECRET = 'another-cursor-secret-0123456789abcdef';
const LISTS: CursorList[] = ['plants', 'webhooks', 'deliveries'];
const RULE = /^after must be a cursor taken from a next link of this list$/;

/** A cursor as the service made them before they were keyed: anyone could make one. */
function checksummed(list: CursorList, position: string): string {
  const kind = { plants: 0x70, webhooks: 0x77, deliveries: 0x64 }[list];
  const body = Buffer.concat([Buffer.of(kind), Buffer.from(position, 'utf8')]);
  const checksum = createHash('sha256').update(body).digest().subarray(0, 4);
  return Buffer.concat([body, checksum]).toString('base64url');
}

/** The same bytes in another spelling: a changed unused low bit of the last character, padding. */
function respelled(cursor: string): string[] {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const spellings = [`${cursor}=`, `${cursor}==`];
  if (cursor.length % 4 !== 0) {
    const last = alphabet.indexOf(cursor[cursor.length - 1]);
    spellings.push(cursor.slice(0, -1) + alphabet[last ^ 1]);
  }
  return spellings;
}

/** Bytes no list's position holds: at least one outside printable ASCII, often a NUL. */
function hostilePosition(): string {
  const bytes = randomBytes(randomInt(1, 60));
  bytes[randomInt(bytes.length)] = randomInt(2) === 0 ? 0 : randomInt(0x80, 0x100);
  return bytes.toString('latin1');
}

/** Each list of one owner, with the path it is read at and a real position in it. */
interface OwnedList {
  list: CursorList;
  path: string;
  position: string;
}

describe.each(databaseKinds())('paging cursors on %s', (kind) => {
  let database: TestDatabase;
  /** Two instances with the same CURSOR_SECRET, and one with another. */
  let first: TestApp;
  let second: TestApp;
  let stranger: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    // No dispatcher: the deliveries stay as the creates stored them.
    const env = { APP_ROLE: 'api', CURSOR_SECRET: SHARED_SECRET };
    first = await startApp(database, env);
    second = await startApp(database, env);
    stranger = await startApp(database, { ...env, CURSOR_SECRET: OTHER_SECRET });
  });
  afterAll(async () => {
    for (const app of [first, second, stranger]) await app?.close();
    await database?.drop();
  });

  /** A new owner with 7 plants and 5 subscriptions, the first of which holds 7 deliveries. */
  async function ownerWithLists(): Promise<{ auth: string; lists: OwnedList[] }> {
    const { auth } = await first.newCaller();
    const hooks = webhooksClient(first, auth);
    const subscriptions = [];
    for (let i = 0; i < 5; i++)
      subscriptions.push(await hooks.subscribe(`https://r${i}.example.com/`));
    const plants = plantsClient(first, auth);
    for (let id = 1; id <= 7; id++) {
      expect((await plants.create({ id, name: `p${id}` })).status).toBe(200);
    }
    const [subscription] = subscriptions;
    const [delivery] = await hooks.deliveries(subscription.id);
    const webhook = (await first.http().get('/webhooks').set('Authorization', auth)).body[0] as {
      id: string;
      createdAt: string;
    };
    return {
      auth,
      lists: [
        { list: 'plants', path: '/plants', position: '3' },
        {
          list: 'webhooks',
          path: '/webhooks',
          position: `${Date.parse(webhook.createdAt)} ${webhook.id}`,
        },
        {
          list: 'deliveries',
          path: `/webhooks/${subscription.id}/deliveries`,
          position: `${Date.parse(delivery.createdAt)} ${delivery.eventId}`,
        },
      ],
    };
  }

  const get = (app: TestApp, auth: string, url: string): Promise<Response> =>
    app.http().get(url).set('Authorization', auth);

  it('answers 400, never a 5xx, to every forged cursor of every list: a NUL byte, another key, another list, huge, not canonical, not of the list form', async () => {
    const { auth, lists } = await ownerWithLists();
    for (const { list, path, position } of lists) {
      const own = cursorOf(await get(first, auth, `${path}?limit=1`));
      expect((await get(first, auth, `${path}?limit=1&after=${own}`)).status).toBe(200);
      const notOfTheForm =
        list === 'plants'
          ? ['03', '-0', '+3', ' 3', '3.0', '3e0', '9223372036854775808', '']
          : [`0${position}`, position.toUpperCase(), position.replace(' ', '  '), `${position} `];
      const forged = [
        // A NUL byte, at the end, alone, or instead of the last character.
        testCursors.encode(list, `${position}\u0000`),
        testCursors.encode(list, '\u0000'),
        testCursors.encode(list, `${position.slice(0, -1)}\u0000`),
        checksummed(list, `${position.slice(0, -1)}\u0000`),
        // Made as anyone could make one before cursors were keyed, or with another key.
        checksummed(list, position),
        cursorsWithSecret(OTHER_SECRET).encode(list, position),
        // Another list's, with this list's position or its own.
        ...LISTS.filter((other) => other !== list).map((other) =>
          testCursors.encode(other, position),
        ),
        // Huge.
        'A'.repeat(10_000),
        testCursors.encode(list, `${position}${'0'.repeat(300)}`),
        // The right bytes in another spelling.
        ...respelled(own),
        // Keyed, but not the form this list's positions have.
        ...notOfTheForm.map((text) => testCursors.encode(list, text)),
        ...Array.from({ length: 40 }, () => testCursors.encode(list, hostilePosition())),
        ...Array.from({ length: 40 }, () => randomBytes(randomInt(1, 120)).toString('base64url')),
      ];
      for (const after of forged) {
        const response = await first
          .http()
          .get(path)
          .query({ limit: '2', after })
          .set('Authorization', auth);
        // Which cursor, when one is not refused as it should be.
        expect(response.status, `${list}: ${after.slice(0, 100)}`).toBe(400);
        expectError(response, 400, RULE);
      }
    }
  });

  it('follows next links across instances that share CURSOR_SECRET; an instance with another refuses them', async () => {
    const { auth, lists } = await ownerWithLists();
    for (const { list, path } of lists) {
      const whole = (await get(first, auth, `${path}?limit=1000`)).body as unknown[];
      expect(whole.length, list).toBeGreaterThanOrEqual(5);
      const pages: unknown[][] = [];
      let url: string | undefined = `${path}?limit=2`;
      // Each page from the other instance than the one that gave its link.
      for (let page = 0; url !== undefined; page++) {
        const response = await get(page % 2 === 0 ? first : second, auth, url);
        expect(response.status, `${list}: ${url}`).toBe(200);
        pages.push(response.body as unknown[]);
        url = nextLinkOf(response);
      }
      expect(pages.length, list).toBe(Math.ceil(whole.length / 2));
      expect(pages.flat(), list).toEqual(whole);
      const cursor = cursorOf(await get(first, auth, `${path}?limit=2`));
      expectError(await get(stranger, auth, `${path}?limit=2&after=${cursor}`), 400, RULE);
    }
  });
});
