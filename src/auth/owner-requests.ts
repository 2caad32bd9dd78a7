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
 * response is done or its connection is gone: a streamed list until its last
 * byte is written. The request quota (RATE_LIMIT_MAX) counts requests over a
 * window; this counts the ones that hold resources now.
 */
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
   * Counts a request of `owner` until `response` closes; past the bound, the
   * 429 to answer instead (the request is then not counted).
   */
  admit(
    owner: string,
    response: EventEmitter & { readonly destroyed: boolean },
  ): TooManyRequestsException | undefined {
    // Closed already (its client hung up while its token was looked up): its
    // 'close' has come and gone, so it is not counted, nor answered.
    if (response.destroyed) return undefined;
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
    response.once('close', () => {
      const left = this.inFlight.get(owner)! - 1;
      if (left === 0) this.inFlight.delete(owner);
      else this.inFlight.set(owner, left);
    });
    return undefined;
  }
}
