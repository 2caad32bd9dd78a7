import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { SQLITE_SYNCHRONOUS } from './data-source-options.js';
import { nextMacrotask } from './next-macrotask.js';
import { handOver, RequestScope } from './request-scope.js';
import { WriteBatch } from './write-batch.js';

/** How Transactions.grouped writes: see there. */
interface GroupedOptions {
  onPostgres?: 'transaction' | 'statement';
  synced?: boolean;
}

/**
 * How repositories change data: in a transaction (`run`) or as one statement
 * (`write`), each on TypeORM's EntityManager; and how they read on a
 * request's behalf (`read`). Given a request's scope, the work runs on a
 * PostgreSQL connection checked out for it (request-scope.ts): within its
 * deadline, on its party's share of the pool.
 *
 * Why not `dataSource.transaction()` alone: TypeORM's SQLite driver runs
 * every query of the process on one connection (one shared QueryRunner), so a
 * second request's transaction started meanwhile becomes a SAVEPOINT inside
 * the first, and a statement another request runs meanwhile joins the open
 * transaction, and is undone if that transaction rolls back. On SQLite both
 * therefore take turns here; reads do not, and may see a turn's uncommitted
 * rows a moment before they commit. PostgreSQL gives each transaction a
 * pooled connection of its own, and a single statement needs no turn.
 */
@Injectable()
export class Transactions {
  private readonly sqlite: boolean;
  /** The end of the queue of SQLite turns. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.sqlite = dataSource.options.type === 'better-sqlite3';
  }

  /**
   * A function that writes one item with `write`. On SQLite, where each
   * commit's flush runs on the event loop and transactions take turns, the
   * items asked for while a commit is under way are written together in the
   * next transaction, with one flush, each caller answered once it has
   * committed (WriteBatch: a lone item is written at once, and a batch that
   * fails is written again item by item); with `synced: false` that commit is
   * `runUnsynced`'s. On PostgreSQL each item is written on its own, side by
   * side: in a transaction, or as its one statement when `onPostgres` says so.
   */
  grouped<Item, Result>(
    write: (manager: EntityManager, item: Item) => Promise<Result>,
    { onPostgres = 'transaction', synced = true }: GroupedOptions = {},
  ): (item: Item) => Promise<Result> {
    if (!this.sqlite) {
      return onPostgres === 'statement'
        ? (item) => this.write((manager) => write(manager, item))
        : (item) => this.run((manager) => write(manager, item));
    }
    const commit = <T>(work: (manager: EntityManager) => Promise<T>) =>
      synced ? this.run(work) : this.runUnsynced(work);
    const batch = new WriteBatch<Item, Result>(
      (items) =>
        commit(async (manager) => {
          const results: Result[] = [];
          for (const item of items) results.push(await write(manager, item));
          return results;
        }),
      (item) => commit((manager) => write(manager, item)),
    );
    return (item) => batch.add(item);
  }

  /**
   * Runs `work` in one transaction: every change it makes is committed, or
   * none. Without a scope, in the background's: work outside a request
   * (request-scope.ts); a request passes its own.
   */
  run<T>(
    work: (manager: EntityManager) => Promise<T>,
    scope = RequestScope.background,
  ): Promise<T> {
    if (this.sqlite) return this.inTurn(() => this.dataSource.transaction(work));
    return this.connected(scope, (manager) => manager.transaction(work));
  }

  /**
   * Like `run`, for a change whose loss costs only doing it again, as the
   * webhook outbox's claims and attempt records (at least once: a lost record
   * means the event is sent again). On SQLite the commit does not wait for the
   * disk, whose fsync would block the event loop: it runs with
   * `synchronous = NORMAL`, set back in the same turn. A crash of the process
   * keeps it; a power loss or an OS crash may undo it (and what came after
   * it, up to the next commit that waited). On PostgreSQL, where a commit
   * does not block the event loop, it is `run`.
   */
  runUnsynced<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (!this.sqlite) return this.run(work);
    return this.inTurn(async () => {
      await this.dataSource.query('PRAGMA synchronous = NORMAL');
      try {
        return await this.dataSource.transaction(work);
      } finally {
        await this.dataSource.query(`PRAGMA synchronous = ${SQLITE_SYNCHRONOUS}`);
      }
    });
  }

  /**
   * Runs one write outside any transaction but its own. Without a scope, on
   * PostgreSQL, each statement checks a connection out for itself, in the
   * scope it hands over (CompiledQuery), else in the background's.
   */
  write<T>(work: (manager: EntityManager) => Promise<T>, scope?: RequestScope): Promise<T> {
    if (this.sqlite) return this.inTurn(() => work(this.dataSource.manager));
    return scope ? this.connected(scope, work) : work(this.dataSource.manager);
  }

  /** Runs reads on a request's behalf: on SQLite as they come, without a turn. */
  read<T>(work: (manager: EntityManager) => Promise<T>, scope: RequestScope): Promise<T> {
    return this.sqlite ? work(this.dataSource.manager) : this.connected(scope, work);
  }

  /** `work` on one PostgreSQL connection, checked out in `scope`. */
  private async connected<T>(
    scope: RequestScope,
    work: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await handOver(scope, () => runner.connect());
      return await work(runner.manager);
    } finally {
      await runner.release();
    }
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    // better-sqlite3 runs each statement, and each commit's fsync, on the event
    // loop; turns chained by promises alone would run back to back without
    // letting a request in between. Each turn starts in a macrotask of its own.
    const result = this.tail.then(nextMacrotask).then(work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
