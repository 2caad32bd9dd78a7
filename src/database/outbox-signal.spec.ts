import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { OutboxSignal } from './outbox-signal.js';

describe('OutboxSignal', () => {
  it("wakes its listeners outside the notifying request's context, timers they set included", async () => {
    // Another storage, as OpenTelemetry keeps the request's trace in one.
    const trace = new AsyncLocalStorage<string>();
    const signal = new OutboxSignal();
    const seen: Array<string | undefined> = [];
    let later: Promise<void> = Promise.resolve();
    signal.subscribe(() => {
      seen.push(trace.getStore());
      later = new Promise((resolve) =>
        setTimeout(() => {
          seen.push(trace.getStore());
          resolve();
        }, 5),
      );
    });
    trace.run('the request', () => {
      expect(trace.getStore()).toBe('the request');
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
