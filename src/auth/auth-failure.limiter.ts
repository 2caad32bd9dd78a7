import { LRUCache } from 'lru-cache';

/** The failed-authentication budget, or null when rate limiting is off (then nothing is counted). */
export const AUTH_FAILURE_LIMITER = Symbol('AUTH_FAILURE_LIMITER');

/**
 * One credential of a client being checked: it holds a place in the client's
 * budget from before its lookup until its outcome is known, so that requests
 * in flight together cannot all pass a count that none of them has reached yet.
 */
export interface Attempt {
  /** The credential was right, or never checked (a 400, a database down): its place is free again. */
  release(): void;
  /** The credential was wrong: its place becomes a failure. */
  fail(): Promise<void>;
}

/**
 * Counts failed authentications per client address; past the limit that
 * client gets 429s (before its token is even looked at) until the window
 * ends, so guessing tokens is slowed without affecting other clients.
 */
export interface AuthFailureLimiter {
  /**
   * Seconds until the client may try again; 0 when it may now. For a request
   * that presents no credential: nothing of it is checked or counted. The
   * in-memory limiter answers without a promise: it is asked on every request.
   */
  retryAfter(client: string): number | Promise<number>;
  /**
   * A place for one credential of `client` to be checked, or the seconds until
   * the client may try again (never 0). While the client's failures and its
   * credentials being checked fill its budget, waits for one of those checks
   * to end: a credential is looked up only while a failure of it would still
   * be within the budget.
   */
  admit(client: string): Attempt | number | Promise<Attempt | number>;
}

/** How many client addresses the in-memory limiter remembers at most. */
const MEMORY_LIMITER_MAX_CLIENTS = 100_000;

export interface MemoryLimiterOptions {
  /** The bound: past it, the least recently seen clients are forgotten. */
  maxClients?: number;
  /** Milliseconds on any monotonic scale (tests move it by hand). */
  now?: () => number;
}

/**
 * A count per client address, each living `windowMs` from when it was set
 * first, at most `maxClients` of them (the least recently seen forgotten
 * first): the in-memory failure budget's, and the refusal pacer's.
 */
export function clientWindows(
  maxClients: number,
  windowMs: number,
  now: () => number,
): LRUCache<string, number> {
  return new LRUCache({
    // maxSize, not max: storage that grows with use (see MemoryThrottlerStorage).
    maxSize: maxClients,
    sizeCalculation: () => 1,
    ttl: windowMs,
    // The clock is read on every call, not cached with a timer per millisecond.
    ttlResolution: 0,
    perf: { now },
  });
}

/** A client's credentials being checked now, and the requests waiting for a place among them. */
interface Checks {
  running: number;
  waiting: ((admission: Attempt | number) => void)[];
}

/** admit()'s answer while every place left in the budget is taken by a check under way. */
const BUSY = Symbol('BUSY');

/**
 * In process memory, bounded: at most `maxClients` addresses, each forgotten
 * when its window ends, and every call O(1) however many addresses were seen.
 * At the bound the least recently seen addresses are forgotten, their failures
 * with them. That is a deliberate trade: a flood of distinct addresses can
 * neither exhaust memory nor slow each request down, at the price that a
 * guesser whose address is pushed out by more than `maxClients` newer ones
 * starts a fresh budget. Several instances, or a budget that must hold under
 * such a flood, use Redis (REDIS_URL).
 *
 * Under concurrency the budget holds exactly: admission, the count of checks
 * under way and the failures change together, synchronously, so at most
 * `limit` wrong credentials of one client are ever looked up per window.
 * The right credentials of that address are not refused for the checks under
 * way: past the budget's free places they wait, in arrival order, for a check
 * to end (a lookup's time), and a 429 comes only once the failures alone
 * reach the limit.
 */
export class MemoryAuthFailureLimiter implements AuthFailureLimiter {
  /** Failures per client; each entry lives one window from its first failure. */
  private readonly failures: LRUCache<string, number>;
  /** Only clients with a check under way: as many entries as requests in flight, at most. */
  private readonly checks = new Map<string, Checks>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    {
      maxClients = MEMORY_LIMITER_MAX_CLIENTS,
      now = () => performance.now(),
    }: MemoryLimiterOptions = {},
  ) {
    this.failures = clientWindows(maxClients, windowMs, now);
  }

  /** How many clients are remembered (never more than maxClients). */
  get size(): number {
    return this.failures.size;
  }

  retryAfter(client: string): number {
    const count = this.failures.get(client);
    if (count === undefined || count < this.limit) return 0;
    return this.failures.getRemainingTTL(client) / 1000;
  }

  admit(client: string): Attempt | number | Promise<Attempt | number> {
    const admission = this.tryAdmit(client);
    if (admission !== BUSY) return admission;
    const checks = this.checks.get(client) as Checks;
    return new Promise((resolve) => checks.waiting.push(resolve));
  }

  private tryAdmit(client: string): Attempt | number | typeof BUSY {
    const wait = this.retryAfter(client);
    if (wait > 0) return wait;
    let checks = this.checks.get(client);
    // Only a check under way makes a request wait: its end is what wakes it.
    if (
      checks &&
      checks.running > 0 &&
      (this.failures.get(client) ?? 0) + checks.running >= this.limit
    ) {
      return BUSY;
    }
    if (!checks) {
      checks = { running: 0, waiting: [] };
      this.checks.set(client, checks);
    }
    checks.running += 1;
    let ended = false;
    const end = (failed: boolean) => {
      if (ended) return;
      ended = true;
      this.end(client, failed);
    };
    return {
      release: () => end(false),
      fail: async () => end(true),
    };
  }

  /** Ends one check of `client`, then admits or refuses, in order, the requests it lets through. */
  private end(client: string, failed: boolean): void {
    const checks = this.checks.get(client) as Checks;
    checks.running -= 1;
    if (failed) this.recordFailure(client);
    while (checks.waiting.length > 0) {
      const admission = this.tryAdmit(client);
      if (admission === BUSY) break;
      (checks.waiting.shift() as (admission: Attempt | number) => void)(admission);
    }
    if (checks.running === 0 && checks.waiting.length === 0) this.checks.delete(client);
  }

  private recordFailure(client: string): void {
    const count = this.failures.get(client);
    // noUpdateTTL: the window starts at the first failure and is not extended by later ones.
    if (count === undefined) this.failures.set(client, 1, { ttl: this.windowMs });
    else this.failures.set(client, count + 1, { noUpdateTTL: true });
  }
}
