import { EventEmitter } from 'node:events';
import type { ConfigService } from '@nestjs/config';
import { describe, expect, it } from 'vitest';
import type { FairShareVariables } from '../database/fair-share.variables.js';
import { AuthMetrics } from '../metrics/auth-metrics.js';
import { OwnerRequests } from './owner-requests.js';
import { TooManyRequestsException } from './too-many-requests.exception.js';

class CountingMetrics extends AuthMetrics {
  refused = 0;
  override refusalHeld(): void {}
  override fairShareRefused(): void {
    this.refused += 1;
  }
}

/** A response still open, as Node's ServerResponse is until its 'close'. */
const response = () => Object.assign(new EventEmitter(), { destroyed: false });

function ownerRequests(limit: number) {
  const config = { get: () => limit } as unknown as ConfigService<FairShareVariables, true>;
  const metrics = new CountingMetrics();
  return { requests: new OwnerRequests(config, metrics), metrics };
}

describe('OwnerRequests', () => {
  it("refuses an owner's request past the bound with a 429 and Retry-After, and counts it", () => {
    const { requests, metrics } = ownerRequests(2);
    expect(requests.admit('alice', response())).toBeUndefined();
    expect(requests.admit('alice', response())).toBeUndefined();
    const refusal = requests.admit('alice', response());
    expect(refusal).toBeInstanceOf(TooManyRequestsException);
    expect(refusal?.getStatus()).toBe(429);
    expect(refusal?.responseHeaders()).toEqual({ 'Retry-After': '1' });
    expect(refusal?.message).toMatch(/at most 2 at once/);
    expect(metrics.refused).toBe(1);
    // Another owner is not held to alice's count.
    expect(requests.admit('bob', response())).toBeUndefined();
  });

  it('does not count a request whose connection closed while its token was looked up', () => {
    const { requests } = ownerRequests(1);
    const gone = Object.assign(response(), { destroyed: true });
    expect(requests.admit('alice', gone)).toBeUndefined();
    // Its 'close' came before: the place was never taken, and the next request gets it.
    expect(requests.admit('alice', response())).toBeUndefined();
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
  });

  it('frees the place when the response closes (answered, or its connection gone), once', () => {
    const { requests } = ownerRequests(1);
    const first = response();
    expect(requests.admit('alice', first)).toBeUndefined();
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
    first.emit('close');
    first.emit('close');
    const second = response();
    expect(requests.admit('alice', second)).toBeUndefined();
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
  });
});
