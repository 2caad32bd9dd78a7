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
  /** When it gives up (a Date.now() value): at its deadline, or after the connect timeout. */
  expiresAt: number;
  deadline: boolean;
  timeoutMs: number;
  admitted: (error: Error | undefined, leave?: Leave) => void;
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
  /** The one timer of all the waits, due at `timerAt`: see `wakeBy`. */
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;

  constructor(private readonly places: number) {}

  /**
   * Calls `admitted`, once `party` may take a connection, with the function
   * that gives its place back; with an error when none comes within
   * `timeoutMs`, or within `deadlineMs`, the request's deadline (when it has
   * one), if that is sooner. A callback, not a promise: it is called as a
   * place is given back, and the checkout goes on at once (FailoverPool).
   * Never called before this returns; ask `tryEnter` first.
   */
  enter(
    party: string,
    timeoutMs: number,
    deadlineMs: number | undefined,
    admitted: (error: Error | undefined, leave?: Leave) => void,
  ): void {
    const deadline = deadlineMs !== undefined && deadlineMs < timeoutMs;
    const waiter: Waiter = {
      seq: this.arrivals++,
      expiresAt: Date.now() + (deadline ? Math.max(0, deadlineMs) : timeoutMs),
      deadline,
      timeoutMs,
      admitted,
    };
    const queue = this.waiting.get(party);
    if (queue) queue.push(waiter);
    else this.waiting.set(party, [waiter]);
    this.waiters += 1;
    this.wakeBy(waiter.expiresAt);
    // A place may be free with no one else waiting: the caller did not ask tryEnter.
    if (this.admitted < this.places) process.nextTick(() => this.admitNext());
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
      for (const [party, queue] of this.waiting) {
        const first = queue[0];
        const holding = this.held.get(party) ?? 0;
        if (holding < fewest || (holding === fewest && first.seq < next!.seq)) {
          next = first;
          nextParty = party;
          fewest = holding;
        }
      }
      this.forget(nextParty, next!);
      next!.admitted(undefined, this.admit(nextParty));
    }
  }

  private forget(party: string, waiter: Waiter): void {
    const queue = this.waiting.get(party)!;
    if (queue[0] === waiter) queue.shift();
    else queue.splice(queue.indexOf(waiter), 1);
    if (queue.length === 0) this.waiting.delete(party);
    this.waiters -= 1;
  }

  /**
   * Ends the waits that are due by `at` or later: one timer for all the
   * waits, set for the one that gives up first. A timer of each wait's own
   * was set and then cleared at its turn (nearly every wait ends in a place):
   * a setTimeout and a clearTimeout per waiting checkout.
   */
  private wakeBy(at: number): void {
    if (this.timer !== undefined && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.giveUpDue(), timerMs(Math.max(0, at - Date.now())));
    // It may outlive the waits it was set for: it must not hold a shutdown up.
    this.timer.unref();
  }

  /** Fails the waits that are due, and sets the timer for the next one to give up. */
  private giveUpDue(): void {
    this.timer = undefined;
    const now = Date.now();
    let nextAt = Infinity;
    for (const [party, queue] of [...this.waiting]) {
      for (const waiter of [...queue]) {
        if (waiter.expiresAt <= now) {
          this.forget(party, waiter);
          waiter.admitted(
            waiter.deadline ? new DeadlineExceededError() : new PoolFullError(waiter.timeoutMs),
          );
        } else if (waiter.expiresAt < nextAt) {
          nextAt = waiter.expiresAt;
        }
      }
    }
    if (nextAt !== Infinity) this.wakeBy(nextAt);
  }
}
