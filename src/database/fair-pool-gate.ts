import { DeadlineExceededError } from './database-errors.js';
import { timerMs } from './request-scope.js';

/**
 * No connection was free within DB_CONNECT_TIMEOUT_MS. Worded as pg-pool
 * words its own timeout, and classified alike (database-errors.ts): a 503,
 * retried only where the route is safe to repeat, since another wait would
 * mostly make the request later.
 */
export class PoolFullError extends Error {
  constructor(timeoutMs: number) {
    super(
      `timeout exceeded when trying to connect: no database connection was free within ${timeoutMs} ms (DB_CONNECT_TIMEOUT_MS)`,
    );
    this.name = 'PoolFullError';
  }
}

interface Waiter {
  /** Arrival order, across parties: first come, first served among equals. */
  seq: number;
  admit: () => void;
}

/** Gives back a place taken with FairPoolGate.enter; a second call does nothing. */
export type Leave = () => void;

/**
 * Shares the pool's connections between parties (owners; work outside a
 * request is one more), work-conserving: a party alone may hold every
 * connection, but while others wait, each connection given back goes to the
 * waiting party that holds the fewest, first come first served among equals.
 * So while several parties want connections, their holdings even out within
 * the time one statement takes, and no party keeps more than its share
 * (half the pool, with two). It admits at most `places` at once, the pool's
 * size, so that pg-pool's own first-come queue never forms.
 */
export class FairPoolGate {
  private readonly held = new Map<string, number>();
  /**
   * Waiters by party, each party's in arrival order: a freed place is given
   * after a look at each waiting party's first waiter, not at every waiter
   * (dozens of one owner's requests can wait at once).
   */
  private readonly waiting = new Map<string, Waiter[]>();
  private waiters = 0;
  private arrivals = 0;
  private admitted = 0;

  constructor(private readonly places: number) {}

  /**
   * Resolves, once `party` may take a connection, with the function that
   * gives its place back. Rejects when none comes within `timeoutMs`, or
   * within `deadlineMs`, the request's deadline (when it has one), if that is
   * sooner.
   */
  enter(party: string, timeoutMs: number, deadlineMs?: number): Promise<Leave> {
    if (this.placeFree()) return Promise.resolve(this.admit(party));
    const deadlineFirst = deadlineMs !== undefined && deadlineMs < timeoutMs;
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        seq: this.arrivals++,
        admit: () => {
          clearTimeout(timer);
          resolve(this.admit(party));
        },
      };
      const timer = setTimeout(
        () => {
          this.forget(party, waiter);
          reject(deadlineFirst ? new DeadlineExceededError() : new PoolFullError(timeoutMs));
        },
        deadlineFirst ? Math.min(timerMs(Math.max(0, deadlineMs)), timeoutMs) : timeoutMs,
      );
      const queue = this.waiting.get(party);
      if (queue) queue.push(waiter);
      else this.waiting.set(party, [waiter]);
      this.waiters += 1;
    });
  }

  /**
   * A place for `party` at once, when one is free and no one waits (the
   * function that gives it back); else undefined, and `enter` waits for one.
   */
  tryEnter(party: string): Leave | undefined {
    return this.placeFree() ? this.admit(party) : undefined;
  }

  /** Connections held (or being made) per party: for tests and metrics. */
  holdings(): ReadonlyMap<string, number> {
    return this.held;
  }

  /** A place is free and no one waits for one. */
  private placeFree(): boolean {
    return this.admitted < this.places && this.waiters === 0;
  }

  private admit(party: string): Leave {
    this.admitted += 1;
    this.held.set(party, (this.held.get(party) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.admitted -= 1;
      const holding = this.held.get(party)! - 1;
      if (holding === 0) this.held.delete(party);
      else this.held.set(party, holding);
      this.admitNext();
    };
  }

  private admitNext(): void {
    while (this.admitted < this.places && this.waiters > 0) {
      let next: Waiter | undefined;
      let nextParty = '';
      let fewest = Infinity;
      for (const [party, [first]] of this.waiting) {
        const holding = this.held.get(party) ?? 0;
        if (holding < fewest || (holding === fewest && first.seq < next!.seq)) {
          next = first;
          nextParty = party;
          fewest = holding;
        }
      }
      this.forget(nextParty, next!);
      next!.admit();
    }
  }

  private forget(party: string, waiter: Waiter): void {
    const queue = this.waiting.get(party)!;
    queue.splice(queue.indexOf(waiter), 1);
    if (queue.length === 0) this.waiting.delete(party);
    this.waiters -= 1;
  }
}
