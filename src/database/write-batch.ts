import { Logger } from '@nestjs/common';
import { nextMacrotask } from './next-macrotask.js';

const logger = new Logger('WriteBatch');

interface Queued<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes that callers ask for one at a time, made together: one batch at a
 * time, of every item asked for since the previous batch started, so that
 * many small writes share one transaction (on SQLite one commit on the event loop,
 * instead of one each). Each caller gets its own item's result.
 *
 * `writeAll` writes a batch in one transaction and returns a result per
 * item, in order; `writeOne` writes an item alone. A batch of one is written
 * alone; a batch that fails is written again one item at a time, so that an
 * item that cannot be written fails only its own caller.
 */
export class WriteBatch<Item, Result> {
  private queued: Queued<Item, Result>[] = [];
  private draining = false;

  constructor(
    private readonly writeAll: (items: Item[]) => Promise<Result[]>,
    private readonly writeOne: (item: Item) => Promise<Result>,
    /** Called each time the last batch asked for has been written. */
    private readonly onIdle?: () => void,
  ) {}

  /** Resolves with the item's result once the batch it joined is written. */
  add(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        void this.drain();
      }
    });
  }

  private async drain(): Promise<void> {
    // Callers whose answers arrived in the same turn of the event loop join the first batch.
    await nextMacrotask();
    while (this.queued.length > 0) {
      const batch = this.queued;
      this.queued = [];
      await this.write(batch);
    }
    this.draining = false;
    this.onIdle?.();
  }

  private async write(batch: Queued<Item, Result>[]): Promise<void> {
    if (batch.length > 1) {
      try {
        const results = await this.writeAll(batch.map(({ item }) => item));
        batch.forEach(({ resolve }, index) => resolve(results[index]));
        return;
      } catch (error) {
        // Written again one by one below: only the item at fault fails.
        logger.warn(
          `a write of ${batch.length} items together failed; writing them one by one: ${String(error)}`,
        );
      }
    }
    for (const { item, resolve, reject } of batch) {
      await this.writeOne(item).then(resolve, reject);
    }
  }
}

/**
 * A WriteBatch per key: the items of one key are written together, one
 * batch at a time, those of different keys side by side. A key's batch is
 * dropped once it has nothing left to write.
 */
export class KeyedWriteBatches<Item, Result> {
  private readonly batches = new Map<string, WriteBatch<Item, Result>>();

  constructor(
    private readonly keyOf: (item: Item) => string,
    private readonly writeAll: (items: Item[]) => Promise<Result[]>,
    private readonly writeOne: (item: Item) => Promise<Result>,
  ) {}

  /** Resolves with the item's result once the batch of its key that it joined is written. */
  add(item: Item): Promise<Result> {
    const key = this.keyOf(item);
    let batch = this.batches.get(key);
    if (!batch) {
      batch = new WriteBatch(this.writeAll, this.writeOne, () => this.batches.delete(key));
      this.batches.set(key, batch);
    }
    return batch.add(item);
  }

  /** How many keys have writes queued or under way. */
  get busyKeys(): number {
    return this.batches.size;
  }
}
