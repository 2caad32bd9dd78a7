import { DataSource } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { testCursors } from './support/cursors.js';
import { PlantsRepository } from '../src/plants/plants.repository.js';
import { LIST_PAGE_SIZE } from '../src/plants/list-pages.js';
import { expectError } from './support/expect-error.js';
import { cursorOf, nextLinkOf, walkPages } from './support/page-links.js';
import { plantsClient } from './support/plants-client.js';
import { databaseKinds } from './support/test-database.js';
import { useTestApp } from './support/test-app.js';

const names = (pages: unknown[][]) => pages.flat().map((plant) => (plant as { name: string }).name);

describe.each(databaseKinds())('GET /plants next links on %s', (kind) => {
  const t = useTestApp(kind);

  const withPlants = async (ids: (bigint | number)[]) => {
    const caller = await t.current.newCaller();
    const plants = plantsClient(t.current, caller.auth);
    for (const id of ids) expect((await plants.create({ id, name: `p${id}` })).status).toBe(200);
    return { ...caller, plants };
  };

  it('links each limited page to the next while plants remain; the walk visits each plant once, in id order, the same as the unlimited list', async () => {
    const { auth, plants } = await withPlants([9, 3, 7, 1, 5, 11, 13]);
    const first = await plants.list(3);
    expect(first.body).toEqual([{ name: 'p1' }, { name: 'p3' }, { name: 'p5' }]);
    expect(first.headers.link).toMatch(/^<\/plants\?limit=3&after=[A-Za-z0-9_-]+>; rel="next"$/);
    const pages = await walkPages(t.current, auth, '/plants?limit=3');
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual((await plants.list()).body);
    // A last page that is exactly full has no link either: no page is ever empty.
    const exact = await walkPages(t.current, auth, '/plants?limit=7');
    expect(exact).toHaveLength(1);
    expect(names(await walkPages(t.current, auth, '/plants?limit=6'))).toHaveLength(7);
  });

  it('has no link without limit, with limit=0, or when nothing remains; a cursor without limit gives the rest', async () => {
    const { auth, plants } = await withPlants([1, 2, 3, 4]);
    expect((await plants.list()).headers.link).toBeUndefined();
    const zero = await plants.list(0);
    expect(zero.body).toEqual([]);
    expect(zero.headers.link).toBeUndefined();
    expect((await plants.list(4)).headers.link).toBeUndefined();
    const after = cursorOf(await plants.list(1));
    const rest = await t.current.http().get(`/plants?after=${after}`).set('Authorization', auth);
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual([{ name: 'p2' }, { name: 'p3' }, { name: 'p4' }]);
    expect(rest.headers.link).toBeUndefined();
    // limit=0 with a cursor is still an empty page with no link.
    const none = await t.current
      .http()
      .get(`/plants?limit=0&after=${after}`)
      .set('Authorization', auth);
    expect(none.body).toEqual([]);
    expect(none.headers.link).toBeUndefined();
  });

  it('walks ids at both ends of int64 with a page size of 1, exactly', async () => {
    const ids = [
      -(2n ** 63n),
      -(2n ** 63n) + 1n,
      -1n,
      0n,
      2n ** 53n,
      2n ** 53n + 1n,
      2n ** 63n - 2n,
      2n ** 63n - 1n,
    ];
    const { auth } = await withPlants([...ids].reverse());
    const pages = await walkPages(t.current, auth, '/plants?limit=1');
    expect(pages).toEqual(ids.map((id) => [{ name: `p${id}` }]));
  });

  it('keeps keyset semantics while another client creates and deletes: created past the cursor is seen, created before it or deleted before it is reached is not', async () => {
    const { owner, auth } = await withPlants([10, 20, 30, 40, 50, 60, 70, 80, 90]);
    // Another client of the same owner, with its own token.
    const other = plantsClient(t.current, `Bearer ${await t.current.tokenFor(owner)}`);
    const pages = await walkPages(t.current, auth, '/plants?limit=3', async (page) => {
      if (page !== 1) return;
      // The cursor now stands after 30.
      expect((await other.create({ id: 5, name: 'p5' })).status).toBe(200);
      expect((await other.create({ id: 25, name: 'p25' })).status).toBe(200);
      expect((await other.create({ id: 55, name: 'p55' })).status).toBe(200);
      expect((await other.create({ id: 95, name: 'p95' })).status).toBe(200);
      expect((await other.remove(20)).status).toBe(204);
      expect((await other.remove(70)).status).toBe(204);
    });
    expect(names(pages)).toEqual([
      'p10',
      'p20',
      'p30',
      'p40',
      'p50',
      'p55',
      'p60',
      'p80',
      'p90',
      'p95',
    ]);
    expect(pages.map((page) => page.length)).toEqual([3, 3, 3, 1]);
  });

  it('answers 400 for tampered, truncated and made-up cursors, and for a cursor of another list', async () => {
    const { auth, plants } = await withPlants([1, 2, 3]);
    const cursor = cursorOf(await plants.list(1));
    const flip = (text: string, at: number) =>
      text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const bad = [
      flip(cursor, 0),
      flip(cursor, 2),
      flip(cursor, cursor.length - 1),
      cursor.slice(0, -1),
      cursor.slice(0, cursor.length >> 1),
      `${cursor}A`,
      `${cursor}=`,
      '',
      'abc',
      Buffer.from('1').toString('base64url'),
      '2',
      testCursors.encode('webhooks', '2'),
      testCursors.encode('plants', '1.5'),
      testCursors.encode('plants', '9223372036854775808'),
      testCursors.encode('plants', ''),
    ];
    for (const after of bad) {
      for (const query of [{ after }, { limit: '1', after }]) {
        expectError(
          await t.current.http().get('/plants').query(query).set('Authorization', auth),
          400,
          /^after must be a cursor taken from a next link of this list$/,
        );
      }
    }
    const repeated = await t.current
      .http()
      .get(`/plants?limit=1&after=${cursor}&after=${cursor}`)
      .set('Authorization', auth);
    expectError(repeated, 400);
  });

  it("reads the owner from the token, never from the cursor: another owner's cursor only positions the caller's own plants", async () => {
    const alice = await withPlants([1, 2, 3, 4]);
    const bob = await withPlants([2, 3]);
    await bob.plants.create({ id: 10, name: 'bob ten' });
    const bobsCursor = cursorOf(await bob.plants.list(1)); // after Bob's 2
    const pages = await walkPages(t.current, alice.auth, `/plants?limit=1&after=${bobsCursor}`);
    expect(names(pages)).toEqual(['p3', 'p4']);
  });

  it('links a page longer than one query (streamed) to the next, with the same walk', async () => {
    const caller = await t.current.newCaller();
    const repository = t.current.app.get(PlantsRepository);
    const manager = t.current.app.get(DataSource).manager;
    const count = LIST_PAGE_SIZE * 2 + 500;
    // Inserted through the repository: thousands of HTTP round trips would only slow the suite.
    for (let id = 1; id <= count; id++)
      await repository.insert(manager, caller.owner, BigInt(id) * 7n, `p${id * 7}`, null);
    const limit = LIST_PAGE_SIZE + 1;
    const first = await plantsClient(t.current, caller.auth).list(limit);
    expect(nextLinkOf(first)).toMatch(new RegExp(`^/plants\\?limit=${limit}&after=`));
    const pages = await walkPages(t.current, caller.auth, `/plants?limit=${limit}`);
    expect(pages.map((page) => page.length)).toEqual([limit, limit, count - 2 * limit]);
    expect(names(pages)).toEqual(Array.from({ length: count }, (_, i) => `p${(i + 1) * 7}`));
  });
  it.each([
    // [plants before, limit, ids created while the page streams, the next page's length]
    ['exactly as many plants as the limit', 1001, 1001, [2001], undefined],
    ['fewer plants than the limit, more created', 1001, 1002, [1001, 1003], undefined],
    ['more plants than the limit', 1101, 1001, [2001], 100],
  ] as const)(
    'sends the plants created inside a streamed page while it streams and skips none: %s',
    async (_case, count, limit, created, nextLength) => {
      const caller = await t.current.newCaller();
      const repository = t.current.app.get(PlantsRepository);
      const manager = t.current.app.get(DataSource).manager;
      const ids = Array.from({ length: count }, (_, i) => 2 * (i + 1));
      for (const id of ids)
        await repository.insert(manager, caller.owner, BigInt(id), `p${id}`, null);
      // The creates come in once the first rows are out, before the rest of the page is read.
      const page = repository.page;
      let reads = 0;
      repository.page = async (...args) => {
        reads += 1;
        if (reads === 2) {
          for (const id of created)
            await repository.insert(manager, caller.owner, BigInt(id), `p${id}`, null);
        }
        return page.apply(repository, args);
      };
      let response;
      try {
        response = await plantsClient(t.current, caller.auth).list(limit);
      } finally {
        repository.page = page;
      }
      expect(reads).toBeGreaterThan(1);
      const firstPage = ids.slice(0, limit);
      const expected = [...firstPage, ...created].sort((a, b) => a - b).map((id) => `p${id}`);
      expect(names([response.body as unknown[]])).toEqual(expected);
      if (nextLength === undefined) {
        expect(nextLinkOf(response)).toBeUndefined();
        return;
      }
      expect(cursorOf(response)).toBeDefined();
      const rest = await walkPages(t.current, caller.auth, nextLinkOf(response)!);
      expect(names(rest)).toEqual(ids.slice(limit).map((id) => `p${id}`));
      expect(rest.flat()).toHaveLength(nextLength);
    },
  );
});
