import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RefusalPacer } from './refusal-pacer.js';

/** Whether a pace has resolved by now (flushes the microtasks first). */
async function settled(pace: Promise<void> | undefined): Promise<boolean> {
  if (pace === undefined) return true;
  let done = false;
  void pace.then(() => (done = true));
  await Promise.resolve();
  return done;
}

describe('RefusalPacer', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('answers the first refusals of a second at once, holds the next ones for the delay, and starts again in the next second', async () => {
    let now = 1_000_000;
    const pacer = new RefusalPacer(3, 500, { now: () => now });
    for (let i = 0; i < 3; i++) expect(pacer.pace('10.0.0.1')).toBeUndefined();
    const held = pacer.pace('10.0.0.1');
    expect(held).toBeInstanceOf(Promise);
    expect(pacer.holding).toBe(1);
    // Another address has a budget of its own.
    expect(pacer.pace('10.0.0.2')).toBeUndefined();

    await vi.advanceTimersByTimeAsync(499);
    expect(await settled(held)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(held)).toBe(true);
    expect(pacer.holding).toBe(0);

    // Later refusals within the same second do not extend it.
    now += 600;
    expect(pacer.pace('10.0.0.1')).toBeInstanceOf(Promise);
    now += 401;
    expect(pacer.pace('10.0.0.1')).toBeUndefined();
    await vi.runAllTimersAsync();
  });

  it('holds at most maxHeld refusals at once; past that it answers at once', async () => {
    let heldCount = 0;
    const pacer = new RefusalPacer(1, 1000, { maxHeld: 2, onHold: () => (heldCount += 1) });
    expect(pacer.pace('10.0.0.1')).toBeUndefined();
    const first = pacer.pace('10.0.0.1');
    const second = pacer.pace('10.0.0.1');
    expect(first).toBeInstanceOf(Promise);
    expect(second).toBeInstanceOf(Promise);
    expect(pacer.pace('10.0.0.1')).toBeUndefined();
    expect(pacer.holding).toBe(2);
    expect(heldCount).toBe(2);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(true);
    expect(pacer.pace('10.0.0.1')).toBeInstanceOf(Promise);
    await vi.runAllTimersAsync();
  });

  it('remembers at most maxClients addresses', () => {
    const pacer = new RefusalPacer(1, 1000, { maxClients: 2 });
    for (const client of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) {
      expect(pacer.pace(client)).toBeUndefined();
    }
    // 10.0.0.1 was forgotten: its first refusal of a new count is answered at once.
    expect(pacer.pace('10.0.0.1')).toBeUndefined();
    expect(pacer.pace('10.0.0.3')).toBeInstanceOf(Promise);
  });
});
