import { describe, expect, it } from 'vitest';
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

  it('sweeps out expired keys once it holds many', async () => {
    const { storage, clock } = storageAt();
    for (let i = 0; i < 100_000; i++) await storage.increment(`ip:${i}`, 1_000, 10, 0, 'default');
    expect(storage.size).toBe(100_000);
    clock.now += 1_000;
    await storage.increment('ip:new', 1_000, 10, 0, 'default');
    expect(storage.size).toBe(1);
  });
});
