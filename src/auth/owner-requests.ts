import type { EventEmitter } from 'node:events';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { FairShareVariables } from '../database/fair-share.variables.js';
import { AuthMetrics } from './auth-metrics.js';
import { TooManyRequestsException } from './too-many-requests.exception.js';

/**
 * Bounds each owner's requests in flight in this instance
 * (FAIR_SHARE_MAX_IN_FLIGHT), so that one owner's burst, or hundreds of lists
 * it never reads, cannot take the memory, the event loop and the database
 * pool from the others. A request counts from its authentication until its
 * response is done or its connection gone (a streamed list until its last
 * byte is written), and, when its handler had started by then, until the
 * handler has answered: that work goes on after its client hangs up. A
 * request whose client is gone before its handler starts is not handled.
 * The request quota (RATE_LIMIT_MAX) counts requests over a window; this
 * counts the ones that hold resources now.
 */
/** A request's place in its owner's count. */
interface Place {
  owner: string;
  /** Its handler has started (Fastify's preHandler): its answer will come. */
  handling: boolean;
  answered: boolean;
  closed: boolean;
  given: boolean;
}

const PLACE = Symbol('owner request place');

/** The raw response a place is kept on. */
type Response = EventEmitter & { readonly destroyed: boolean; [PLACE]?: Place };

@Injectable()
export class OwnerRequests {
  private readonly inFlight = new Map<string, number>();
  private readonly limit: number;

  constructor(
    config: ConfigService<FairShareVariables, true>,
    private readonly metrics: AuthMetrics,
  ) {
    this.limit = config.get('FAIR_SHARE_MAX_IN_FLIGHT', { infer: true });
  }

  /**
   * Counts a request of `owner` until `response` has closed and, if its
   * handler started (`handling`), answered (`answered`); past the bound, the
   * 429 to answer instead (the request is then not counted).
   */
  admit(owner: string, response: Response): TooManyRequestsException | undefined {
    const current = this.inFlight.get(owner) ?? 0;
    if (current >= this.limit) {
      this.metrics.fairShareRefused();
      return new TooManyRequestsException(
        `too many requests in flight for this owner (at most ${this.limit} at once): ` +
          'retry once one of them has been answered',
        1,
      );
    }
    this.inFlight.set(owner, current + 1);
    const place: Place = { owner, handling: false, answered: false, closed: false, given: false };
    response[PLACE] = place;
    const closed = () => {
      place.closed = true;
      this.settle(place);
    };
    // Closed already: its client hung up while its token was looked up.
    if (response.destroyed) closed();
    // on, not once: a response closes once, and once wraps each listener in a closure more.
    else response.on('close', closed);
    return undefined;
  }

  /**
   * Its handler is about to start (Fastify's preHandler): false when its
   * client is gone already, and then it should not start at all.
   */
  handling(response: Response): boolean {
    const place = response[PLACE];
    if (place === undefined) return true;
    if (place.given) return false;
    place.handling = true;
    return true;
  }

  /** The request's handler has answered, or its error has (Fastify's onSend). */
  answered(response: Response): void {
    const place = response[PLACE];
    if (place === undefined) return;
    place.answered = true;
    this.settle(place);
  }

  /** Gives the place back once its response is closed and no handler of it still runs. */
  private settle(place: Place): void {
    if (place.given || !place.closed || (place.handling && !place.answered)) return;
    place.given = true;
    const left = this.inFlight.get(place.owner)! - 1;
    if (left === 0) this.inFlight.delete(place.owner);
    else this.inFlight.set(place.owner, left);
  }
}
