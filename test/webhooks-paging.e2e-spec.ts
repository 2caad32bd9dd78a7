import { describe, expect, it } from 'vitest';
import { testCursors } from './support/cursors.js';
import { expectError } from './support/expect-error.js';
import { cursorOf, walkPages } from './support/page-links.js';
import { plantsClient } from './support/plants-client.js';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import { webhooksClient } from './support/webhooks-client.js';

const ids = (pages: unknown[][], key: 'id' | 'eventId') =>
  pages.flat().map((item) => (item as Record<string, string>)[key]);

describe.each(databaseKinds())('webhook lists next links on %s', (kind) => {
  const t = useTestApp(kind);

  it('pages GET /webhooks oldest first: each subscription once, a link only while more remain', async () => {
    const { auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    for (let i = 0; i < 5; i++) await hooks.subscribe(`https://receiver${i}.example.com/`);
    const all = await t.current.http().get('/webhooks').set('Authorization', auth);
    expect(all.headers.link).toBeUndefined();
    const pages = await walkPages(t.current, auth, '/webhooks?limit=2');
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(ids(pages, 'id')).toEqual(all.body.map((s: { id: string }) => s.id));
    expect(pages.flat().map((s) => (s as { url: string }).url)).toEqual(
      [0, 1, 2, 3, 4].map((i) => `https://receiver${i}.example.com/`),
    );
    expect(await walkPages(t.current, auth, '/webhooks?limit=5')).toHaveLength(1);
    const zero = await t.current.http().get('/webhooks?limit=0').set('Authorization', auth);
    expect(zero.body).toEqual([]);
    expect(zero.headers.link).toBeUndefined();
    // A subscription created past the cursor shows up on a later page.
    const cursor = cursorOf(
      await t.current.http().get('/webhooks?limit=4').set('Authorization', auth),
    );
    await hooks.subscribe('https://late.example.com/');
    const rest = await t.current.http().get(`/webhooks?after=${cursor}`).set('Authorization', auth);
    expect(rest.body.map((s: { url: string }) => s.url)).toEqual([
      'https://receiver4.example.com/',
      'https://late.example.com/',
    ]);
  });

  it('pages the deliveries newest first, by keyset: a delivery newer than the walk is not seen, none twice', async () => {
    const { auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    const plants = plantsClient(t.current, auth);
    const { id } = await hooks.subscribe('https://receiver.example.com/');
    for (let i = 1; i <= 7; i++)
      expect((await plants.create({ id: i, name: `p${i}` })).status).toBe(200);
    const path = `/webhooks/${id}/deliveries`;
    const before = await t.current.http().get(`${path}?limit=1000`).set('Authorization', auth);
    expect(before.body).toHaveLength(7);
    expect(before.headers.link).toBeUndefined();
    const pages = await walkPages(t.current, auth, `${path}?limit=3`, async (page) => {
      if (page === 1) expect((await plants.create({ id: 8, name: 'p8' })).status).toBe(200);
    });
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    expect(ids(pages, 'eventId')).toEqual(before.body.map((d: { eventId: string }) => d.eventId));
    const createdAt = pages.flat().map((d) => Date.parse((d as { createdAt: string }).createdAt));
    expect(createdAt).toEqual([...createdAt].sort((a, b) => b - a));
    // The default page (100) has no link while fewer remain.
    expect(
      (await t.current.http().get(path).set('Authorization', auth)).headers.link,
    ).toBeUndefined();
  });

  it('answers 400 for a tampered or truncated cursor, or one of another list', async () => {
    const { auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    const { id } = await hooks.subscribe('https://a.example.com/');
    await hooks.subscribe('https://b.example.com/');
    await plantsClient(t.current, auth).create({ id: 1, name: 'p1' });
    await plantsClient(t.current, auth).create({ id: 2, name: 'p2' });
    const webhooksCursor = cursorOf(
      await t.current.http().get('/webhooks?limit=1').set('Authorization', auth),
    );
    const deliveriesCursor = cursorOf(
      await t.current.http().get(`/webhooks/${id}/deliveries?limit=1`).set('Authorization', auth),
    );
    const plantsCursor = testCursors.encode('plants', '1');
    for (const [path, own, foreign] of [
      ['/webhooks', webhooksCursor, [deliveriesCursor, plantsCursor]],
      [`/webhooks/${id}/deliveries`, deliveriesCursor, [webhooksCursor, plantsCursor]],
    ] as const) {
      for (const after of [own.slice(0, -2), `x${own.slice(1)}`, 'abc', ...foreign]) {
        expectError(
          await t.current.http().get(path).query({ limit: '1', after }).set('Authorization', auth),
          400,
          /^after must be a cursor taken from a next link of this list$/,
        );
      }
      expect(
        (await t.current.http().get(`${path}?limit=1&after=${own}`).set('Authorization', auth))
          .status,
      ).toBe(200);
    }
  });

  it('answers 400 for a bad limit in one wording, each list with its own range', async () => {
    const { auth } = await t.current.newCaller();
    const { id } = await webhooksClient(t.current, auth).subscribe('https://a.example.com/');
    for (const [path, rule] of [
      ['/webhooks', /^limit must be an integer from 0 to 1000$/],
      [`/webhooks/${id}/deliveries`, /^limit must be an integer from 1 to 1000$/],
    ] as const) {
      for (const query of [
        'limit=-1',
        'limit=1001',
        'limit=abc',
        'limit=1.5',
        'limit=',
        'limit=1&limit=2',
      ]) {
        expectError(
          await t.current.http().get(`${path}?${query}`).set('Authorization', auth),
          400,
          rule,
        );
      }
    }
    expectError(
      await t.current.http().get(`/webhooks/${id}/deliveries?limit=0`).set('Authorization', auth),
      400,
      /^limit must be an integer from 1 to 1000$/,
    );
  });
});
