import { DataSource } from 'typeorm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dataSourceOptions } from './data-source-options.js';
import { nextMacrotask } from './next-macrotask.js';
import { Transactions } from './transactions.js';

const settings = { DB_POOL_SIZE: 2, DB_CONNECT_TIMEOUT_MS: 2000, DB_STATEMENT_TIMEOUT_MS: 2000 };

/**
 * TypeORM's SQLite driver has one connection for the process: these pin that
 * a write of one caller never joins, nor is undone with, another's transaction.
 */
describe('Transactions on SQLite', () => {
  let dataSource: DataSource;
  let transactions: Transactions;
  const names = async () =>
    (await dataSource.query<{ name: string }[]>('SELECT name FROM t ORDER BY name')).map(
      (row) => row.name,
    );

  beforeEach(async () => {
    dataSource = await new DataSource(
      dataSourceOptions({ ...settings, DATABASE_URL: 'sqlite::memory:' }),
    ).initialize();
    await dataSource.query('CREATE TABLE t (name TEXT PRIMARY KEY)');
    transactions = new Transactions(dataSource);
  });
  afterEach(() => dataSource.destroy());

  it("keeps a write made while another's transaction is open when that transaction rolls back", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const failing = transactions.run(async (manager) => {
      await manager.query("INSERT INTO t VALUES ('from the transaction')");
      opened();
      await gate;
      throw new Error('rolled back');
    });
    await open;
    const write = transactions.write((manager) =>
      manager.query("INSERT INTO t VALUES ('acknowledged')"),
    );
    // The write waits for its turn rather than running inside the open transaction
    // (where the rollback below would undo it).
    expect(await names()).toEqual(['from the transaction']);
    release();
    await expect(failing).rejects.toThrow('rolled back');
    await write;
    expect(await names()).toEqual(['acknowledged']);
  });

  it('runs concurrent transactions one after the other, each committed or rolled back alone', async () => {
    const results = await Promise.allSettled(
      ['a', 'b', 'c', 'd'].map((name) =>
        transactions.run(async (manager) => {
          await manager.query('INSERT INTO t VALUES (?)', [name]);
          // Lets the event loop run whatever waits: another transaction, were they not taking turns.
          await nextMacrotask();
          if (name === 'b') throw new Error('b fails');
        }),
      ),
    );
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(await names()).toEqual(['a', 'c', 'd']);
  });

  it('commits an unsynced transaction without waiting for the disk, and every other one with FULL again', async () => {
    const synchronous = async () =>
      (await dataSource.query<{ synchronous: number }[]>('PRAGMA synchronous'))[0].synchronous;
    const FULL = 2;
    const NORMAL = 1;
    expect(await synchronous()).toBe(FULL);
    const during = await transactions.runUnsynced(async (manager) => {
      await manager.query("INSERT INTO t VALUES ('unsynced')");
      return synchronous();
    });
    expect(during).toBe(NORMAL);
    expect(await synchronous()).toBe(FULL);
    // Also after a failure, and a write queued behind it commits with FULL.
    const failing = transactions.runUnsynced(async (manager) => {
      await manager.query("INSERT INTO t VALUES ('rolled back')");
      throw new Error('rolled back');
    });
    const after = transactions.write(async (manager) => {
      await manager.query("INSERT INTO t VALUES ('synced')");
      return synchronous();
    });
    await expect(failing).rejects.toThrow('rolled back');
    expect(await after).toBe(FULL);
    expect(await names()).toEqual(['synced', 'unsynced']);
  });

  it('lets the event loop serve what waits (a request, a timer) between two turns', async () => {
    const order: string[] = [];
    const first = transactions.write(async (manager) => {
      await manager.query("INSERT INTO t VALUES ('first')");
      // Arrives while the first turn runs, as a request would.
      setImmediate(() => order.push('waiting callback'));
      order.push('first turn');
    });
    const second = transactions.write(async (manager) => {
      await manager.query("INSERT INTO t VALUES ('second')");
      order.push('second turn');
    });
    await Promise.all([first, second]);
    expect(order).toEqual(['first turn', 'waiting callback', 'second turn']);
  });
});
