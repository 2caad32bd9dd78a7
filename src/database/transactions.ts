import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { SQLITE_SYNCHRONOUS } from './data-source-options.js';
import { nextMacrotask } from './next-macrotask.js';

/**
 * How repositories change data: in a transaction (`run`) or as one statement
 * (`write`), each on TypeORM's EntityManager.
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
   * Whether transactions take turns on one connection, each commit's flush
   * on the event loop (SQLite): writes that arrive while one commits are
   * best written together in the next (WriteBatch), one flush for all.
   */
  get takeTurns(): boolean {
    return this.sqlite;
  }

  /** Runs `work` in one transaction: every change it makes is committed, or none. */
  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const transaction = () => this.dataSource.transaction(work);
    return this.sqlite ? this.inTurn(transaction) : transaction();
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

  /** Runs one write outside any transaction but its own. */
  write<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const statement = () => work(this.dataSource.manager);
    return this.sqlite ? this.inTurn(statement) : statement();
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
