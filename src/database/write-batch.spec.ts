import { describe, expect, it } from 'vitest';
import { nextMacrotask } from './next-macrotask.js';
import { KeyedWriteBatches, WriteBatch } from './write-batch.js';

/** A writer that records what it was asked to write, and can be held open or made to fail. */
class Recorder {
  readonly calls: string[][] = [];
  failOn: string | undefined;
  /** Resolves once a batch is being written (called when writeAll is). */
  private batchStarted = (): void => {};
  private gate = Promise.resolve();
  private release = (): void => {};
  readonly batch = new WriteBatch<string, string>(
    async (items) => {
      this.calls.push(items);
      this.batchStarted();
      await this.gate;
      if (this.failOn !== undefined && items.includes(this.failOn)) {
        throw new Error(`cannot write ${this.failOn}`);
      }
      return items.map((item) => `${item} written with ${items.length}`);
    },
    async (item) => {
      this.calls.push([item]);
      if (item === this.failOn) throw new Error(`cannot write ${item}`);
      return `${item} written alone`;
    },
  );

  /** The next batches wait until `open()`. */
  hold(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }

  open(): void {
    this.release();
  }

  /** Resolves when the next batch starts being written. */
  nextBatch(): Promise<void> {
    return new Promise((resolve) => (this.batchStarted = resolve));
  }
}

describe('WriteBatch', () => {
  it('writes what callers ask for in the same turn of the event loop together, each getting its own result', async () => {
    const writer = new Recorder();
    const results = await Promise.all(['a', 'b', 'c'].map((item) => writer.batch.add(item)));
    expect(results).toEqual(['a written with 3', 'b written with 3', 'c written with 3']);
    expect(writer.calls).toEqual([['a', 'b', 'c']]);
  });

  it('writes one item alone, and what is asked for during a batch in the next one', async () => {
    const writer = new Recorder();
    writer.hold();
    const started = writer.nextBatch();
    const first = [writer.batch.add('a'), writer.batch.add('b')];
    await started;
    const during = [writer.batch.add('c'), writer.batch.add('d')];
    // The turn in which a batch of c and d would start, were batches not one at a time.
    await nextMacrotask();
    // One batch at a time: c and d wait for a and b.
    expect(writer.calls).toEqual([['a', 'b']]);
    writer.open();
    expect(await Promise.all([...first, ...during])).toEqual([
      'a written with 2',
      'b written with 2',
      'c written with 2',
      'd written with 2',
    ]);
    expect(await writer.batch.add('e')).toBe('e written alone');
    expect(writer.calls).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('writes a failed batch again item by item: only the item at fault fails', async () => {
    const writer = new Recorder();
    writer.failOn = 'b';
    const results = await Promise.allSettled(['a', 'b', 'c'].map((item) => writer.batch.add(item)));
    expect(results).toEqual([
      { status: 'fulfilled', value: 'a written alone' },
      { status: 'rejected', reason: new Error('cannot write b') },
      { status: 'fulfilled', value: 'c written alone' },
    ]);
    expect(writer.calls).toEqual([['a', 'b', 'c'], ['a'], ['b'], ['c']]);
    // The batch goes on after a failure.
    expect(await Promise.all([writer.batch.add('d'), writer.batch.add('e')])).toEqual([
      'd written with 2',
      'e written with 2',
    ]);
  });
});

describe('KeyedWriteBatches', () => {
  it('writes the items of one key together, one batch at a time, and other keys side by side', async () => {
    const calls: string[][] = [];
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const batches = new KeyedWriteBatches<string, string>(
      (item) => item[0],
      async (items) => {
        calls.push(items);
        if (items.includes('a1')) await held;
        return items.map((item) => `${item} with ${items.length}`);
      },
      async (item) => {
        calls.push([item]);
        return `${item} alone`;
      },
    );
    const first = [batches.add('a1'), batches.add('a2')];
    await nextMacrotask();
    // Key a's batch is held; a3 and a4 wait for it, b1 is written meanwhile.
    const during = [batches.add('a3'), batches.add('a4')];
    expect(await batches.add('b1')).toBe('b1 alone');
    expect(calls).toEqual([['a1', 'a2'], ['b1']]);
    await nextMacrotask();
    // Key b's batch is dropped once written; key a's is still held.
    expect(batches.busyKeys).toBe(1);
    release();
    expect(await Promise.all([...first, ...during])).toEqual([
      'a1 with 2',
      'a2 with 2',
      'a3 with 2',
      'a4 with 2',
    ]);
    expect(calls).toEqual([['a1', 'a2'], ['b1'], ['a3', 'a4']]);
    await nextMacrotask();
    // Nothing left to write: no key is kept.
    expect(batches.busyKeys).toBe(0);
  });
});
