import { ConflictException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { OutboxSignal } from '../database/outbox-signal.js';
import type { Transactions } from '../database/transactions.js';
import type { PlantMetrics } from './plant-metrics.js';
import type { NewPlantDto } from './dto/new-plant.dto.js';
import type { PlantCreatedEvents } from './plant-created.port.js';
import type { PlantsRepository, StoredPlant } from './plants.repository.js';
import { RequestScope } from '../database/request-scope.js';
import { LIST_PAGE_SIZE, rowsPerPage } from './list-pages.js';
import { PlantsService } from './plants.service.js';

/** An in-memory stand-in with the repository's contract: (owner, id) unique, pages in id order. */
class MemoryPlants {
  rows = new Map<string, StoredPlant & { owner: string }>();
  pageCalls = 0;
  /** As on SQLite: a create is an insert and the outbox's write, in a transaction. */
  insertThen = () => undefined;
  insertManyThen = () => undefined;
  private key = (owner: string, id: bigint | string) => `${owner}/${id}`;

  async insert(
    _manager: EntityManager,
    owner: string,
    id: bigint,
    name: string,
    tag: string | null,
  ): Promise<boolean> {
    if (this.rows.has(this.key(owner, id))) return false;
    this.rows.set(this.key(owner, id), { owner, id: String(id), name, tag });
    return true;
  }

  async findOne(owner: string, id: bigint): Promise<StoredPlant | undefined> {
    return this.rows.get(this.key(owner, id));
  }

  async page(owner: string, size: number, afterId?: string): Promise<StoredPlant[]> {
    this.pageCalls += 1;
    return this.after(owner, afterId).slice(0, size);
  }

  async pageEnd(owner: string, size: number, afterId?: string) {
    const ids = this.after(owner, afterId).slice(size - 1, size + 1);
    return ids.length === 0 ? undefined : { lastId: ids[0].id, more: ids.length > 1 };
  }

  private after(owner: string, afterId?: string): StoredPlant[] {
    return [...this.rows.values()]
      .filter((r) => r.owner === owner && (afterId === undefined || BigInt(r.id) > BigInt(afterId)))
      .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  }

  async delete(_manager: EntityManager, owner: string, id: bigint): Promise<boolean> {
    return this.rows.delete(this.key(owner, id));
  }
}

/** The outbox write as if the owner had `subscriptions` subscriptions: the plants it was given. */
class MemoryOutbox {
  subscriptions = 0;
  events: Parameters<PlantCreatedEvents['record']>[2][] = [];
  statementPart = () => ({
    sql: '',
    names: [],
    values: () => ({}),
    many: { sql: '', names: [], perPlant: [] },
  });

  async record(
    _manager: EntityManager,
    _owner: string,
    plant: Parameters<PlantCreatedEvents['record']>[2],
  ): Promise<number> {
    if (this.subscriptions > 0) this.events.push(plant);
    return this.subscriptions;
  }
}

/** Writes each item at once on a manager the stand-ins ignore. */
const inline = {
  grouped:
    (write: (manager: EntityManager, item: unknown) => Promise<unknown>) => (item: unknown) =>
      write({} as EntityManager, item),
} as unknown as Transactions;

const setup = () => {
  const memory = new MemoryPlants();
  const events = new MemoryOutbox();
  const counted = { created: 0, deleted: 0 };
  const metrics = {
    plantCreated: () => (counted.created += 1),
    plantDeleted: () => (counted.deleted += 1),
  } as unknown as PlantMetrics;
  const outbox = new OutboxSignal();
  let notified = 0;
  outbox.subscribe(() => (notified += 1));
  return {
    memory,
    events,
    counted,
    notified: () => notified,
    service: new PlantsService(
      memory as unknown as PlantsRepository,
      metrics,
      outbox,
      events,
      inline,
    ),
  };
};
const plant = (id: bigint, name: string, tag?: string | null) => ({ id, name, tag }) as NewPlantDto;

async function collect(list: Awaited<ReturnType<PlantsService['list']>>) {
  const all = [...list.plants];
  if (!list.complete) for await (const page of list.rest) all.push(...page);
  return all;
}

/** Outside a request: the stand-ins read no scope. */
const scope = RequestScope.background;

describe('PlantsService', () => {
  it('stores the plant as created (exact int64 id, null tag when none) in the outbox, and wakes it only when events were stored', async () => {
    const { events, service, notified } = setup();
    await service.create('alice', plant(1n, 'Fern'), scope);
    expect(events.events).toEqual([]);
    expect(notified()).toBe(0);
    events.subscriptions = 2;
    await service.create('alice', plant(2n ** 63n - 1n, 'Ivy', 'vine'), scope);
    await service.create('alice', plant(2n ** 63n - 1n, 'Ivy', 'vine'), scope);
    await service.create('alice', plant(3n, 'Moss'), scope);
    // The replay stores nothing.
    expect(events.events).toEqual([
      { id: 2n ** 63n - 1n, name: 'Ivy', tag: 'vine' },
      { id: 3n, name: 'Moss', tag: null },
    ]);
    expect(notified()).toBe(2);
  });

  it('creates, replays identically, and refuses a different plant under a used id', async () => {
    const { service, memory, counted } = setup();
    expect(await service.create('alice', plant(1n, 'Fern', 'green'), scope)).toEqual({
      name: 'Fern',
      tag: 'green',
    });
    expect(await service.create('alice', plant(1n, 'Fern', 'green'), scope)).toEqual({
      name: 'Fern',
      tag: 'green',
    });
    await expect(service.create('alice', plant(1n, 'Fern'), scope)).rejects.toBeInstanceOf(
      ConflictException,
    );
    await expect(service.create('alice', plant(1n, 'Moss', 'green'), scope)).rejects.toThrow(
      /id 1 already exists/,
    );
    expect(memory.rows.size).toBe(1);
    // A replay or a conflict creates nothing, so counts nothing.
    expect(counted.created).toBe(1);
  });

  it('creates again, with its event, an exact replay whose plant is deleted between its insert and its lookup', async () => {
    const { service, memory, events, counted } = setup();
    events.subscriptions = 1;
    await service.create('alice', plant(1n, 'Fern', 'green'), scope);
    const findOne = memory.findOne.bind(memory);
    // Another request's delete commits just after the replay's insert found the row.
    memory.findOne = async (owner, id) => {
      memory.findOne = findOne;
      await memory.delete({} as EntityManager, owner, id);
      return findOne(owner, id);
    };
    expect(await service.create('alice', plant(1n, 'Fern', 'green'), scope)).toEqual({
      name: 'Fern',
      tag: 'green',
    });
    expect(await memory.findOne('alice', 1n)).toEqual(expect.objectContaining({ name: 'Fern' }));
    expect(events.events).toHaveLength(2);
    expect(counted.created).toBe(2);
  });

  it('answers 503, never 409, when its id is taken at every insert and gone at every lookup', async () => {
    const { service, memory } = setup();
    let inserts = 0;
    memory.insert = async () => (inserts++, false);
    memory.findOne = async () => undefined;
    await expect(service.create('alice', plant(1n, 'Fern'), scope)).rejects.toBeInstanceOf(
      ServiceUnavailableException,
    );
    expect(inserts).toBe(5);
  });

  it('treats a null tag as no tag', async () => {
    const { service } = setup();
    expect(await service.create('alice', plant(2n, 'Aloe', null), scope)).toEqual({ name: 'Aloe' });
    expect(await service.create('alice', plant(2n, 'Aloe'), scope)).toEqual({ name: 'Aloe' });
  });

  it('passes on errors of the insert', async () => {
    const { service, memory } = setup();
    memory.insert = async () => {
      throw new Error('disk full');
    };
    await expect(service.create('alice', plant(1n, 'x'), scope)).rejects.toThrow('disk full');
  });

  it('returns a short list whole, in one query', async () => {
    const { service, memory } = setup();
    for (const id of [3n, 1n, 2n]) await service.create('alice', plant(id, `p${id}`), scope);
    const list = await service.list('alice', {}, scope);
    expect(list.complete).toBe(true);
    expect(list.plants.map((p) => p.name)).toEqual(['p1', 'p2', 'p3']);
    expect(memory.pageCalls).toBe(1);
    const two = await service.list('alice', { limit: 2 }, scope);
    expect(two.plants).toEqual([{ name: 'p1' }, { name: 'p2' }]);
    expect(two.next).toBe('2');
    expect(memory.pageCalls).toBe(2);
    expect((await service.list('alice', { limit: 0 }, scope)).plants).toEqual([]);
    expect((await service.list('alice', { limit: 0 }, scope)).next).toBeUndefined();
    expect((await service.list('alice', { limit: 3 }, scope)).next).toBeUndefined();
    expect((await service.list('bob', {}, scope)).plants).toEqual([]);
  });

  it('streams a long list page by page, in order, up to the limit', async () => {
    const { service } = setup();
    const count = LIST_PAGE_SIZE * 2 + 5;
    for (let i = count; i > 0; i--) await service.create('alice', plant(BigInt(i), `p${i}`), scope);
    const all = await service.list('alice', {}, scope);
    expect(all.complete).toBe(false);
    const names = (await collect(all)).map((p) => p.name);
    expect(names).toHaveLength(count);
    expect(names[0]).toBe('p1');
    expect(names[count - 1]).toBe(`p${count}`);
    expect(
      await collect(await service.list('alice', { limit: LIST_PAGE_SIZE + 1 }, scope)),
    ).toHaveLength(LIST_PAGE_SIZE + 1);
    expect(
      await collect(await service.list('alice', { limit: LIST_PAGE_SIZE }, scope)),
    ).toHaveLength(LIST_PAGE_SIZE);
  });

  it("gets the owner's plant by exact id, and 404s for another owner's or a missing one", async () => {
    const { service } = setup();
    await service.create('alice', plant(2n ** 53n + 1n, 'Fern', 'green'), scope);
    await service.create('alice', plant(2n ** 53n, 'Moss'), scope);
    expect(await service.get('alice', 2n ** 53n + 1n, scope)).toEqual({
      name: 'Fern',
      tag: 'green',
    });
    expect(await service.get('alice', 2n ** 53n, scope)).toEqual({ name: 'Moss' });
    await expect(service.get('bob', 2n ** 53n, scope)).rejects.toBeInstanceOf(NotFoundException);
    await expect(service.get('alice', 4n, scope)).rejects.toThrow('no plant with id 4');
  });

  it('pages by keyset: each plant once, in order, next only while plants remain, small and streamed pages alike', async () => {
    const { service } = setup();
    const count = LIST_PAGE_SIZE * 2 + 5;
    for (let i = 1; i <= count; i++)
      await service.create('alice', plant(BigInt(i * 3), `p${i * 3}`), scope);
    for (const limit of [7, LIST_PAGE_SIZE, LIST_PAGE_SIZE + 1, LIST_PAGE_SIZE * 2 + 5]) {
      const names: string[] = [];
      let after: bigint | undefined;
      let pages = 0;
      for (;;) {
        const page = await service.list('alice', { limit, after }, scope);
        const rows = await collect(page);
        pages += 1;
        expect(rows.length).toBeLessThanOrEqual(limit);
        names.push(...rows.map((p) => p.name));
        if (page.next === undefined) break;
        expect(rows).toHaveLength(limit);
        after = BigInt(page.next);
      }
      expect(names, String(limit)).toEqual(
        Array.from({ length: count }, (_, i) => `p${(i + 1) * 3}`),
      );
      expect(pages).toBe(Math.ceil(count / limit));
    }
    // A cursor without limit: the rest, and no next.
    const rest = await service.list('alice', { after: 3n * BigInt(count - 2) }, scope);
    expect(await collect(rest)).toEqual([
      { name: `p${3 * (count - 1)}` },
      { name: `p${3 * count}` },
    ]);
    expect(rest.next).toBeUndefined();
  });

  it('deletes only existing plants of the owner', async () => {
    const { service, counted } = setup();
    await service.create('alice', plant(1n, 'Fern'), scope);
    await expect(service.delete('bob', 1n, scope)).rejects.toBeInstanceOf(NotFoundException);
    await service.delete('alice', 1n, scope);
    await expect(service.delete('alice', 1n, scope)).rejects.toThrow('no plant with id 1');
    expect(counted.deleted).toBe(1);
  });
});

describe('rowsPerPage', () => {
  const rows = (count: number, chars: number, tag: string | null = null) =>
    Array.from({ length: count }, () => ({ name: 'n'.repeat(chars), tag }));

  it('reads whole pages of ordinary plants', () => {
    expect(rowsPerPage(rows(1000, 12))).toBe(LIST_PAGE_SIZE);
  });

  it('reads pages of about 64 KiB of large plants (a power of two), never fewer than 16 rows', () => {
    // 255 + 255 characters and the JSON around them: about 534 bytes a row.
    const size = rowsPerPage(rows(256, 255, 't'.repeat(255)));
    expect(size).toBe(64);
    expect(size * 534).toBeLessThanOrEqual(64 * 1024);
    expect(rowsPerPage(rows(10, 100_000))).toBe(16);
  });
});
