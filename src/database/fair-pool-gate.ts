import { DeadlineExceededError } from './database-errors.js';

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
  party: string;
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
  private readonly waiting: Waiter[] = [];
  private admitted = 0;

  constructor(private readonly places: number) {}

  /**
   * Resolves, once `party` may take a connection, with the function that
   * gives its place back. Rejects when none comes within `timeoutMs`, or
   * within `deadlineMs`, the request's deadline (when it has one), if that is
   * sooner.
   */
  enter(party: string, timeoutMs: number, deadlineMs?: number): Promise<Leave> {
    if (this.admitted < this.places && this.waiting.length === 0) {
      return Promise.resolve(this.admit(party));
    }
    const deadlineFirst = deadlineMs !== undefined && deadlineMs < timeoutMs;
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        party,
        admit: () => {
          clearTimeout(timer);
          resolve(this.admit(party));
        },
      };
      const timer = setTimeout(
        () => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          reject(deadlineFirst ? new DeadlineExceededError() : new PoolFullError(timeoutMs));
        },
        Math.max(0, deadlineFirst ? deadlineMs : timeoutMs),
      );
      this.waiting.push(waiter);
    });
  }

  /** Connections held (or being made) per party: for tests and metrics. */
  holdings(): ReadonlyMap<string, number> {
    return this.held;
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
    while (this.admitted < this.places && this.waiting.length > 0) {
      let next = 0;
      let fewest = this.held.get(this.waiting[0].party) ?? 0;
      for (let i = 1; i < this.waiting.length && fewest > 0; i++) {
        const holding = this.held.get(this.waiting[i].party) ?? 0;
        if (holding < fewest) {
          next = i;
          fewest = holding;
        }
      }
      const [waiter] = this.waiting.splice(next, 1);
      waiter.admit();
    }
  }
}
