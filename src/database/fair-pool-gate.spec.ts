import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeadlineExceededError, isDatabaseUnavailable, nothingRan } from './database-errors.js';
import { FairPoolGate, type Leave, PoolFullError } from './fair-pool-gate.js';

/** `gate.enter` as a promise of the place's leave function. */
function entered(
  gate: FairPoolGate,
  party: string,
  timeoutMs: number,
  deadlineMs?: number,
): Promise<Leave> {
  return new Promise((resolve, reject) =>
    gate.enter(party, timeoutMs, deadlineMs, (error, leave) =>
      error ? reject(error) : resolve(leave!),
    ),
  );
}

/** Enters and records the order in which parties were let in. */
function recorder(gate: FairPoolGate) {
  const order: string[] = [];
  const enter = (party: string, timeoutMs = 60_000, deadlineMs?: number) =>
    entered(gate, party, timeoutMs, deadlineMs).then((leave) => {
      order.push(party);
      return leave;
    });
  return { order, enter };
}

describe('FairPoolGate', () => {
  afterEach(() => vi.useRealTimers());

  it('lets one party alone take every place (work-conserving), then queues it', async () => {
    const gate = new FairPoolGate(3);
    const { order, enter } = recorder(gate);
    const leaves = await Promise.all([enter('a'), enter('a'), enter('a')]);
    const fourth = enter('a');
    await Promise.resolve();
    expect(order).toEqual(['a', 'a', 'a']);
    leaves[0]();
    await fourth;
    expect(order).toEqual(['a', 'a', 'a', 'a']);
    expect(gate.holdings().get('a')).toBe(3);
  });

  it('gives a free place at once with tryEnter, and none while the places are taken or others wait', async () => {
    const gate = new FairPoolGate(2);
    const first = gate.tryEnter('a');
    expect(first).toBeTypeOf('function');
    expect(gate.tryEnter('b')).toBeTypeOf('function');
    expect(gate.tryEnter('c')).toBeUndefined();
    const waiting = entered(gate, 'c', 60_000);
    first!();
    // The freed place went to c's waiter: not to a caller that did not wait for it.
    expect(gate.tryEnter('a')).toBeUndefined();
    await waiting;
    expect(gate.holdings()).toEqual(
      new Map([
        ['b', 1],
        ['c', 1],
      ]),
    );
  });

  it('gives each freed place to the waiting party that holds the fewest, so holdings even out', async () => {
    const gate = new FairPoolGate(4);
    const { order, enter } = recorder(gate);
    const held: Leave[] = await Promise.all([enter('a'), enter('a'), enter('a'), enter('a')]);
    // a has queued before b, and queues more: b still goes first.
    const waiting = [enter('a'), enter('a'), enter('b'), enter('b'), enter('a')];
    order.length = 0;
    for (let i = 0; i < 4; i++) {
      held[i]();
      await new Promise((resolve) => setImmediate(resolve));
    }
    // a gives back its 4 places one by one: b (holding 0, then 1, against a's
    // 3, then 2) gets the first two, though a's waiters came first; then a.
    expect(order).toEqual(['b', 'b', 'a', 'a']);
    expect(Object.fromEntries(gate.holdings())).toEqual({ a: 2, b: 2 });
    // The last of a's waiters gets the next place given back.
    (await waiting[0])();
    await waiting[4];
    expect(order.at(-1)).toBe('a');
  });

  it('serves parties holding as many in the order their first waiters came', async () => {
    const gate = new FairPoolGate(1);
    const { order, enter } = recorder(gate);
    const leave = await enter('a');
    const waiting = [enter('c'), enter('b'), enter('c'), enter('b')];
    order.length = 0;
    leave();
    // Each place is given back before the next is given: c and b hold none
    // every time, and which goes next is which has the earlier waiter.
    for (const next of waiting) (await next)();
    expect(order).toEqual(['c', 'b', 'c', 'b']);
  });

  it('gives a place back once, however often its leave is called', async () => {
    const gate = new FairPoolGate(1);
    const { enter } = recorder(gate);
    const leave = await enter('a');
    leave();
    leave();
    expect(gate.holdings().size).toBe(0);
    await enter('b');
    const third = entered(gate, 'c', 20);
    await expect(third).rejects.toBeInstanceOf(PoolFullError);
    // A 503, but no proof that nothing ran: as pg-pool's own timeout, never retried for a delete.
    const error = await third.catch((failure: unknown) => failure);
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(nothingRan(error)).toBe(false);
  });

  it('fails a wait after the connect timeout, or after the deadline when that is sooner, and forgets the waiter', async () => {
    vi.useFakeTimers();
    const gate = new FairPoolGate(1);
    const leave = await entered(gate, 'a', 1000);
    const timedOut = entered(gate, 'b', 1000);
    const pastDeadline = entered(gate, 'c', 1000, 200);
    vi.advanceTimersByTime(200);
    await expect(pastDeadline).rejects.toBeInstanceOf(DeadlineExceededError);
    vi.advanceTimersByTime(800);
    await expect(timedOut).rejects.toThrow(/no database connection was free within 1000 ms/);
    leave();
    // Neither of the two that gave up holds a place.
    expect(gate.holdings().size).toBe(0);
    await expect(entered(gate, 'd', 1000)).resolves.toBeTypeOf('function');
  });

  it('keeps one timer for all its waits, set again only for a wait that gives up sooner', async () => {
    vi.useFakeTimers();
    const gate = new FairPoolGate(1);
    const leave = gate.tryEnter('a')!;
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const waits = [entered(gate, 'b', 1000), entered(gate, 'c', 1000), entered(gate, 'b', 1000)];
    expect(timers).toHaveBeenCalledTimes(1);
    const sooner = entered(gate, 'd', 1000, 100);
    expect(timers).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(100);
    await expect(sooner).rejects.toBeInstanceOf(DeadlineExceededError);
    // The others are served in their order, each as a place comes back.
    leave();
    const second = await waits[0];
    second();
    (await waits[1])();
    (await waits[2])();
    expect(gate.holdings().size).toBe(0);
    timers.mockRestore();
  });
});
