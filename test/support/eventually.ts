/**
 * The one way the tests wait for something to happen: poll a condition until
 * it holds, with a deadline. A test never waits a fixed time for a thing to
 * be done (a busy machine makes any fixed time too short, and every run pays
 * it in full); it waits for the thing itself: an answer, a log line, a state.
 */

/** What a probe returns while the condition does not hold yet. */
type NotYet = false | undefined | null;

/**
 * Polls `probe` until it returns something other than false, undefined or
 * null, and returns that. The first attempt is at once, each next one
 * `intervalMs` after the previous one ended: a probe that keeps the CPU busy
 * still leaves the event loop that long for the I/O it waits for (child
 * processes block once their output pipes are full). After `timeoutMs` it
 * throws an Error saying `describe()`. An error `probe` throws ends the wait
 * with it: that is how a probe says that the awaited state can no longer come.
 */
export async function eventually<T>(
  probe: () => T | NotYet | Promise<T | NotYet>,
  describe: string | (() => string | Promise<string>),
  timeoutMs = 30_000,
  intervalMs = 50,
): Promise<Exclude<T, NotYet>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== false && found !== undefined && found !== null) {
      return found as Exclude<T, NotYet>;
    }
    if (Date.now() > deadline) {
      const why = typeof describe === 'string' ? describe : await describe();
      throw new Error(`not within ${timeoutMs} ms: ${why}`);
    }
    await new Promise((nextAttempt) => setTimeout(nextAttempt, intervalMs));
  }
}
