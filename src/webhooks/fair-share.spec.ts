import { describe, expect, it } from 'vitest';
import { FairShare } from './fair-share.js';

const a1 = { subscriptionId: 'a1', owner: 'a' };
const a2 = { subscriptionId: 'a2', owner: 'a' };
const b1 = { subscriptionId: 'b1', owner: 'b' };

describe('FairShare', () => {
  it('gives one owner half of the concurrency, at least 1, and a subscription no more than its owner', () => {
    expect(new FairShare(16, 4)).toMatchObject({ perOwner: 8, perSubscription: 4 });
    expect(new FairShare(7, 4)).toMatchObject({ perOwner: 3, perSubscription: 3 });
    expect(new FairShare(1, 4)).toMatchObject({ perOwner: 1, perSubscription: 1 });
  });

  it('counts deliveries in flight by subscription and by owner, and forgets what is done', () => {
    const share = new FairShare(16, 4);
    share.started(a1);
    share.started(a1);
    share.started(a2);
    share.started(b1);
    expect(share.room()).toEqual({
      perSubscription: 4,
      perOwner: 8,
      subscriptions: new Map([
        ['a1', 2],
        ['a2', 1],
        ['b1', 1],
      ]),
      owners: new Map([
        ['a', 3],
        ['b', 1],
      ]),
    });
    share.finished(a2);
    share.finished(b1);
    expect(share.room().subscriptions).toEqual(new Map([['a1', 2]]));
    expect(share.room().owners).toEqual(new Map([['a', 2]]));
  });

  it('says whether a claim filled a subscription or owner to its cap, as the room stood when asked', () => {
    const share = new FairShare(6, 2);
    share.started(a1);
    const room = share.room();
    expect(share.filled(room, [])).toBe(false);
    expect(share.filled(room, [b1])).toBe(false);
    // a1 had 1 of 2.
    expect(share.filled(room, [a1])).toBe(true);
    expect(share.filled(room, [b1, b1])).toBe(true);
    // Owner a had 1 of 3 (6 / 2): a2 once leaves it below, twice fills it, though a2 has room for 3.
    const roomy = { ...room, perSubscription: 3 };
    expect(share.filled(roomy, [a2, b1])).toBe(false);
    expect(share.filled(roomy, [a2, a2])).toBe(true);
    // A delivery that finished meanwhile does not change the room the claim was given.
    share.finished(a1);
    expect(share.filled(room, [a1])).toBe(true);
    expect(share.filled(share.room(), [a1])).toBe(false);
  });

  it('says when a finished delivery brings its subscription or owner back under the cap', () => {
    const share = new FairShare(4, 2);
    share.started(a1);
    share.started(a1);
    share.started(b1);
    // a1 was at its cap of 2.
    expect(share.finished(a1)).toBe(true);
    expect(share.finished(a1)).toBe(false);
    // b1 never reached a cap.
    expect(share.finished(b1)).toBe(false);
    share.started(a1);
    share.started(a2);
    // Owner a was at its cap of 2 (4 / 2), a1 was not at its own.
    expect(share.finished(a1)).toBe(true);
  });
});
