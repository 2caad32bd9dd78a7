import type { LRUCache } from 'lru-cache';
import { clientWindows } from './auth-failure.limiter.js';

/** Refusals are paced per client address, or not at all when rate limiting is off (null). */
export const REFUSAL_PACER = Symbol('REFUSAL_PACER');

/** How many client addresses the pacer remembers at most (as the failure budget does). */
const MAX_CLIENTS = 100_000;

/**
 * How many refusals may be held back at once in one instance. A held request
 * keeps its socket and at most the body Node has buffered for it before
 * back-pressure stops the reading (one or two reads of 64 KiB): 256 of them
 * stay within about 32 MiB. Past it, a refusal is answered at once.
 */
const MAX_HELD = 256;

/** The counting window: the rate is per second. */
const WINDOW_MS = 1000;

export interface RefusalPacerOptions {
  maxClients?: number;
  maxHeld?: number;
  /** Milliseconds on any monotonic scale (tests move it by hand). */
  now?: () => number;
  /** Told of each refusal held back (the metrics' counter). */
  onHold?: () => void;
}

/**
 * Paces the answers to requests that authenticate no one (the 401s, 429s and
 * 400s of the authentication step, answered before the body is read), per
 * client address: past `perSecond` of them in a second, each further one is
 * answered `delayMs` late, its body read meanwhile no further than Node's
 * buffer (back-pressure stops the reading).
 *
 * Why: a refusal costs the service about as much CPU as a small list (a new
 * connection, the answer, the close), so a client that loops on refused
 * requests as fast as they come back takes the service's CPU from the
 * authenticated callers, whatever its bodies weigh. Held back, a looping
 * client gets one answer per `delayMs` per connection. Nothing is counted for
 * an authenticated request, so the real clients behind the same address
 * (a NAT, a proxy) are not slowed; a browser or probe without a token only
 * gets its 401 later. Counted in each instance's memory: the pacing protects
 * that instance's CPU, which is what it spends.
 */
export class RefusalPacer {
  /** Refusals per client in its current window (which starts at its first refusal). */
  private readonly refusals: LRUCache<string, number>;
  private held = 0;
  private readonly maxHeld: number;
  private readonly onHold: () => void;

  constructor(
    private readonly perSecond: number,
    private readonly delayMs: number,
    {
      maxClients = MAX_CLIENTS,
      maxHeld = MAX_HELD,
      now = () => performance.now(),
      onHold = () => {},
    }: RefusalPacerOptions = {},
  ) {
    this.maxHeld = maxHeld;
    this.onHold = onHold;
    this.refusals = clientWindows(maxClients, WINDOW_MS, now);
  }

  /** How many refusals are held back now. */
  get holding(): number {
    return this.held;
  }

  /**
   * Counts a refusal to `client`; resolves when it may be answered: at once
   * (undefined) within the rate or when `maxHeld` are held already, after
   * `delayMs` otherwise.
   */
  pace(client: string): Promise<void> | undefined {
    const count = (this.refusals.get(client) ?? 0) + 1;
    // noUpdateTTL: the window starts at the first refusal and is not extended by later ones.
    this.refusals.set(client, count, { noUpdateTTL: count > 1 });
    if (count <= this.perSecond || this.held >= this.maxHeld) return undefined;
    this.held += 1;
    this.onHold();
    return new Promise((resolve) =>
      setTimeout(() => {
        this.held -= 1;
        resolve();
      }, this.delayMs),
    );
  }
}
