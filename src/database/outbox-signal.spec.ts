import { describe, expect, it } from 'vitest';
import { OutboxSignal } from './outbox-signal.js';
import { remainingMs, withDeadline } from './request-deadline.js';

describe('OutboxSignal', () => {
  it("wakes its listeners outside the notifying request's deadline, timers they set included", async () => {
    const signal = new OutboxSignal();
    const seen: Array<number | undefined> = [];
    let later: Promise<void> = Promise.resolve();
    signal.subscribe(() => {
      seen.push(remainingMs());
      later = new Promise((resolve) =>
        setTimeout(() => {
          seen.push(remainingMs());
          resolve();
        }, 5),
      );
    });
    withDeadline(Date.now() + 1000, () => {
      expect(remainingMs()).toBeGreaterThan(0);
      signal.notify();
    });
    await later;
    expect(seen).toEqual([undefined, undefined]);
  });

  it('stops waking a listener once it unsubscribes', () => {
    const signal = new OutboxSignal();
    let woken = 0;
    const unsubscribe = signal.subscribe(() => (woken += 1));
    signal.notify();
    unsubscribe();
    signal.notify();
    expect(woken).toBe(1);
  });
});
