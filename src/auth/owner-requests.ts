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
 * pool from the others. A request counts from its authentication until both
 * its handler has answered and its response is done or its connection gone:
 * a streamed list until its last byte is written, and a request whose client
 * hung up until its handler is through, since that work goes on. The request
 * quota (RATE_LIMIT_MAX) counts requests over a window; this counts the ones
 * that hold resources now.
 */
/** A request's place: given back once both its ends (the answer, the close) have come. */
interface Place {
  owner: string;
  ends: number;
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
   * Counts a request of `owner` until its handler has answered (`answered`)
   * and `response` has closed; past the bound, the 429 to answer instead (the
   * request is then not counted).
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
    const place: Place = { owner, ends: 2 };
    response[PLACE] = place;
    // Closed already (its client hung up while its token was looked up): its
    // 'close' has come and gone, and only the answer is still to come.
    if (response.destroyed) this.end(place);
    else response.once('close', () => this.end(place));
    return undefined;
  }

  /** The request's handler has answered, or its error has (Fastify's onSend). */
  answered(response: Response): void {
    const place = response[PLACE];
    if (place === undefined) return;
    response[PLACE] = undefined;
    this.end(place);
  }

  private end(place: Place): void {
    place.ends -= 1;
    if (place.ends > 0) return;
    const left = this.inFlight.get(place.owner)! - 1;
    if (left === 0) this.inFlight.delete(place.owner);
    else this.inFlight.set(place.owner, left);
  }
}
