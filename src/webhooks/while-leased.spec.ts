import { describe, expect, it } from 'vitest';
import { whileLeased } from './while-leased.js';

/** A write that fails `times` times, then succeeds; how often it was called. */
function failing(times: number) {
  const write = async () => {
    write.calls += 1;
    if (write.calls <= times) throw new Error(`failure ${write.calls}`);
    return 'written';
  };
  write.calls = 0;
  return write;
}

describe('whileLeased', () => {
  it('tries a failed write again, waiting longer each time, until it succeeds', async () => {
    const write = failing(2);
    const started = Date.now();
    expect(await whileLeased(write, Date.now() + 10_000, new AbortController().signal)).toBe(
      'written',
    );
    expect(write.calls).toBe(3);
    // 100 ms, then 200 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(295);
  });

  it('gives up with the last failure when the next try would come after the lease', async () => {
    const write = failing(5);
    await expect(
      whileLeased(write, Date.now() + 250, new AbortController().signal),
    ).rejects.toThrow('failure 2');
    expect(write.calls).toBe(2);
  });

  it("gives up at once once shutdown's grace is over", async () => {
    const write = failing(5);
    const stop = new AbortController();
    stop.abort();
    await expect(whileLeased(write, Date.now() + 10_000, stop.signal)).rejects.toThrow('failure 1');
    expect(write.calls).toBe(1);
  });
});
