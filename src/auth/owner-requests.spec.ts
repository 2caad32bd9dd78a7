import { EventEmitter } from 'node:events';
import type { ConfigService } from '@nestjs/config';
import { describe, expect, it } from 'vitest';
import type { FairShareVariables } from '../database/fair-share.variables.js';
import { MetricsRegistry } from '../metrics/metrics-registry.js';
import { AuthMetrics } from './auth-metrics.js';
import { OwnerRequests } from './owner-requests.js';
import { TooManyRequestsException } from './too-many-requests.exception.js';

/** AuthMetrics in a registry of its own, with the number of fair-share refusals it counted. */
class CountingMetrics extends AuthMetrics {
  private readonly registry: MetricsRegistry;
  constructor(registry = new MetricsRegistry()) {
    super(registry);
    this.registry = registry;
  }
  async refused(): Promise<number> {
    const metric = await this.registry.getSingleMetric('fair_share_refusals_total')!.get();
    return metric.values[0]?.value ?? 0;
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
  it("refuses an owner's request past the bound with a 429 and Retry-After, and counts it", async () => {
    const { requests, metrics } = ownerRequests(2);
    expect(requests.admit('alice', response())).toBeUndefined();
    expect(requests.admit('alice', response())).toBeUndefined();
    const refusal = requests.admit('alice', response());
    expect(refusal).toBeInstanceOf(TooManyRequestsException);
    expect(refusal?.getStatus()).toBe(429);
    expect(refusal?.responseHeaders()).toEqual({ 'Retry-After': '1' });
    expect(refusal?.message).toMatch(/at most 2 at once/);
    expect(await metrics.refused()).toBe(1);
    // Another owner is not held to alice's count.
    expect(requests.admit('bob', response())).toBeUndefined();
  });

  it('counts a request whose connection closed while its token was looked up until its handler has answered', () => {
    const { requests } = ownerRequests(1);
    const gone = Object.assign(response(), { destroyed: true });
    expect(requests.admit('alice', gone)).toBeUndefined();
    // Its 'close' came before, but its handler still runs: the place stays taken.
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
    requests.answered(gone);
    expect(requests.admit('alice', response())).toBeUndefined();
  });

  it('frees the place once the handler has answered and the response has closed, in either order, once', () => {
    const { requests } = ownerRequests(1);
    const streamed = response();
    expect(requests.admit('alice', streamed)).toBeUndefined();
    // Answered (a streamed list's first bytes), not yet closed: still taken.
    requests.answered(streamed);
    requests.answered(streamed);
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
    streamed.emit('close');
    streamed.emit('close');

    const hungUp = response();
    expect(requests.admit('alice', hungUp)).toBeUndefined();
    // Its client hung up while the handler runs: still taken until the handler answers.
    hungUp.emit('close');
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
    requests.answered(hungUp);
    const next = response();
    expect(requests.admit('alice', next)).toBeUndefined();
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
  });

  it('ignores the answer of a request it never counted', () => {
    const { requests } = ownerRequests(1);
    requests.answered(response());
    const counted = response();
    expect(requests.admit('alice', counted)).toBeUndefined();
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
  });
});
