import { describe, expect, it } from 'vitest';
import { measureFlatCost } from '../../test/support/flat-cost.js';
import { MemoryThrottlerStorage } from './memory-throttler.storage.js';

function storageAt(start = 1_000_000) {
  const clock = { now: start };
  return { storage: new MemoryThrottlerStorage(() => clock.now), clock };
}

describe('MemoryThrottlerStorage', () => {
  it('counts the hits of a window, and starts a new window once it has passed', async () => {
    const { storage, clock } = storageAt();
    expect(await storage.increment('owner:a', 60_000, 3, 60_000, 'default')).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    clock.now += 59_500;
    expect(await storage.increment('owner:a', 60_000, 3, 60_000, 'default')).toMatchObject({
      totalHits: 2,
      timeToExpire: 1,
    });
    clock.now += 500;
    expect(await storage.increment('owner:a', 60_000, 3, 60_000, 'default')).toMatchObject({
      totalHits: 1,
      timeToExpire: 60,
    });
  });

  it('blocks a key past its limit for the block duration, then lets it through again', async () => {
    const { storage, clock } = storageAt();
    const hit = () => storage.increment('owner:a', 10_000, 2, 30_000, 'default');
    await hit();
    await hit();
    expect(await hit()).toMatchObject({ totalHits: 3, isBlocked: true, timeToBlockExpire: 30 });
    clock.now += 20_000; // a new window, still blocked
    expect(await hit()).toMatchObject({ totalHits: 1, isBlocked: true, timeToBlockExpire: 10 });
    clock.now += 10_000; // the block and that window are over
    expect(await hit()).toMatchObject({ totalHits: 1, isBlocked: false, timeToBlockExpire: 0 });
  });

  it('keeps keys and throttler names apart', async () => {
    const { storage } = storageAt();
    await storage.increment('owner:a', 60_000, 5, 0, 'default');
    await storage.increment('owner:a', 60_000, 5, 0, 'default');
    expect((await storage.increment('owner:b', 60_000, 5, 0, 'default')).totalHits).toBe(1);
    expect((await storage.increment('owner:a', 60_000, 5, 0, 'burst')).totalHits).toBe(1);
    expect(storage.size).toBe(3);
  });

  it('holds one record per key however many hits it takes', async () => {
    const { storage } = storageAt();
    for (let i = 0; i < 100_000; i++) await storage.increment('owner:a', 60_000, 1e9, 0, 'default');
    expect(storage.size).toBe(1);
    expect((await storage.increment('owner:a', 60_000, 1e9, 0, 'default')).totalHits).toBe(100_001);
  });

  it('forgets the least recently counted key at its bound, and only then', async () => {
    const storage = new MemoryThrottlerStorage(() => 0, 2);
    await storage.increment('ip:a', 60_000, 10, 0, 'default');
    await storage.increment('ip:b', 60_000, 10, 0, 'default');
    await storage.increment('ip:a', 60_000, 10, 0, 'default'); // ip:a is now the most recent
    await storage.increment('ip:c', 60_000, 10, 0, 'default');
    expect(storage.size).toBe(2);
    expect((await storage.increment('ip:a', 60_000, 10, 0, 'default')).totalHits).toBe(3);
    expect((await storage.increment('ip:b', 60_000, 10, 0, 'default')).totalHits).toBe(1);
  });

  it('costs the same per hit for 1,000,000 distinct keys, and holds at most its bound', async () => {
    const storage = new MemoryThrottlerStorage(undefined, 100_000);
    const { ratio, largestSize } = measureFlatCost(
      (key) => void storage.increment(key, 60_000, 10, 60_000, 'default'),
      () => storage.size,
    );
    expect(largestSize).toBe(100_000);
    // Past the bound each new key also evicts one, which about doubles its cost; the sweep of
    // the whole map that this replaced visited all 100k keys for each new key past the 100k-th.
    expect(ratio).toBeLessThan(10);
  });
});
