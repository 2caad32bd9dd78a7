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

  it('does not count a request whose connection closed while its token was looked up, nor handle it', () => {
    const { requests } = ownerRequests(1);
    const gone = Object.assign(response(), { destroyed: true });
    expect(requests.admit('alice', gone)).toBeUndefined();
    // Its 'close' came before: the place is free again, and its handler is not to start.
    expect(requests.handling(gone)).toBe(false);
    const next = response();
    expect(requests.admit('alice', next)).toBeUndefined();
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
  });

  it('frees the place when the response closes, once, and a handler that started only once it has answered', () => {
    const { requests } = ownerRequests(1);
    const answered = response();
    expect(requests.admit('alice', answered)).toBeUndefined();
    expect(requests.handling(answered)).toBe(true);
    // Answered (a streamed list's first bytes), not yet closed: still taken.
    requests.answered(answered);
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
    answered.emit('close');
    answered.emit('close');

    const hungUp = response();
    expect(requests.admit('alice', hungUp)).toBeUndefined();
    expect(requests.handling(hungUp)).toBe(true);
    // Its client hung up while the handler runs: still taken until the handler answers.
    hungUp.emit('close');
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
    requests.answered(hungUp);
    requests.answered(hungUp);

    // Gone before its handler started (while its body was read): free at the close.
    const cutOff = response();
    expect(requests.admit('alice', cutOff)).toBeUndefined();
    cutOff.emit('close');
    expect(requests.handling(cutOff)).toBe(false);
    const next = response();
    expect(requests.admit('alice', next)).toBeUndefined();
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
  });

  it('lets a request it never counted be handled, and ignores its answer', () => {
    const { requests } = ownerRequests(1);
    const uncounted = response();
    expect(requests.handling(uncounted)).toBe(true);
    requests.answered(uncounted);
    expect(requests.admit('alice', response())).toBeUndefined();
    expect(requests.admit('alice', response())).toBeInstanceOf(TooManyRequestsException);
  });
});
