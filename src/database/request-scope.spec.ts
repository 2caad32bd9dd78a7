import { describe, expect, it } from 'vitest';
import {
  earliestScope,
  handedOverScope,
  handOver,
  ownerParty,
  RequestScope,
  timerMs,
} from './request-scope.js';

describe('the request scope', () => {
  it("counts a request's deadline from its arrival, and keeps it once its owner is known", () => {
    // Arrived 300 ms ago, with 1000 ms for its database work.
    const arrived = RequestScope.arrival(1000, 300, '192.0.2.7');
    expect(arrived.party).toBe('address:192.0.2.7');
    expect(arrived.remainingMs()).toBeGreaterThan(600);
    expect(arrived.remainingMs()).toBeLessThanOrEqual(700);
    const owned = arrived.forOwner('alice');
    expect([owned.expiresAt, owned.party]).toEqual([arrived.expiresAt, ownerParty('alice')]);
  });

  it("gives later work the request's party without its deadline", () => {
    const later = RequestScope.until(Date.now() + 1000, ownerParty('alice')).later();
    expect([later.party, later.remainingMs()]).toEqual(['owner:alice', undefined]);
  });

  it('picks of several scopes the one due first, work without a deadline last', () => {
    const party = ownerParty('alice');
    const first = RequestScope.until(1_000, party);
    const second = RequestScope.until(2_000, party);
    const none = second.later();
    expect(earliestScope([second, none, first])).toBe(first);
    expect(earliestScope([none, second])).toBe(second);
    expect(earliestScope([none])).toBe(none);
  });

  it('is the background party, with no deadline, outside a request', () => {
    expect(RequestScope.background.remainingMs()).toBeUndefined();
    expect(RequestScope.background.party).toBe('background');
    expect(handedOverScope()).toBe(RequestScope.background);
  });

  it('hands a scope over only while the call it wraps runs, nested calls included', async () => {
    const outer = RequestScope.until(Date.now() + 1000, ownerParty('alice'));
    const inner = RequestScope.until(Date.now() + 1000, ownerParty('bob'));
    const seen: RequestScope[] = [];
    const after = handOver(outer, async () => {
      seen.push(handedOverScope());
      handOver(inner, () => seen.push(handedOverScope()));
      seen.push(handedOverScope());
      await Promise.resolve();
      return handedOverScope();
    });
    expect(seen).toEqual([outer, inner, outer]);
    // Past its first await the work runs without it.
    await expect(after).resolves.toBe(RequestScope.background);
    expect(() =>
      handOver(outer, () => {
        throw new Error('no connection');
      }),
    ).toThrow('no connection');
    expect(handedOverScope()).toBe(RequestScope.background);
  });

  it('rounds a timer up by at most 3 %, so that nearby deadlines share a duration', () => {
    for (const ms of [0, 1, 5.5, 63, 64, 100, 999, 1000, 9_990, 10_000, 86_400_000]) {
      expect(timerMs(ms)).toBeGreaterThanOrEqual(ms);
      expect(timerMs(ms)).toBeLessThanOrEqual(Math.max(Math.ceil(ms), ms * 1.032));
    }
    expect(new Set([9_990, 10_050, 10_200, 10_240].map(timerMs)).size).toBe(1);
    expect(timerMs(40)).toBe(40);
  });
});
