import { describe, expect, it } from 'vitest';
import { measureFlatCost } from '../../test/support/flat-cost.js';
import { type Attempt, MemoryAuthFailureLimiter } from './auth-failure.limiter.js';

/** An admission that must be a place for a check, given at once. */
function placeOf(admission: Attempt | number | Promise<Attempt | number>): Attempt {
  if (typeof admission === 'number') throw new Error(`expected a place, got ${admission}`);
  if (admission instanceof Promise) throw new Error('expected a place at once, not a wait');
  return admission;
}

/** One wrong credential of `client`, checked. */
const failOnce = (limiter: MemoryAuthFailureLimiter, client: string) =>
  placeOf(limiter.admit(client)).fail();

/** Whether a promise has settled, after every microtask queued so far has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('MemoryAuthFailureLimiter', () => {
  it('refuses a client after the limit until the window ends, without affecting others', async () => {
    let now = 1_000_000;
    const limiter = new MemoryAuthFailureLimiter(3, 60_000, { now: () => now });
    for (let i = 0; i < 2; i++) await failOnce(limiter, '10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
    await failOnce(limiter, '10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBe(60);
    expect(limiter.admit('10.0.0.1')).toBe(60);
    expect(limiter.retryAfter('10.0.0.2')).toBe(0);
    now += 30_000;
    expect(limiter.retryAfter('10.0.0.1')).toBe(30);
    now += 30_000;
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
    await failOnce(limiter, '10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
  });

  it('starts the window at the first failure: a later one does not extend it', async () => {
    let now = 1_000_000;
    const limiter = new MemoryAuthFailureLimiter(2, 60_000, { now: () => now });
    await failOnce(limiter, '10.0.0.1');
    now += 30_000;
    await failOnce(limiter, '10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBe(30);
  });

  it('admits at most the limit of concurrent checks of one client, and refuses the waiting ones once all failed', async () => {
    const limiter = new MemoryAuthFailureLimiter(3, 60_000);
    const admissions = Array.from({ length: 10 }, () => limiter.admit('10.0.0.1'));
    const places = admissions.filter((admission) => !(admission instanceof Promise));
    expect(places).toHaveLength(3);
    const waiting = admissions.filter((admission) => admission instanceof Promise);
    expect(await settled(Promise.race(waiting))).toBe(false);
    // Another address is not held up.
    placeOf(limiter.admit('10.0.0.2')).release();
    for (const place of places) await placeOf(place).fail();
    const answers = await Promise.all(waiting);
    expect(answers.every((answer) => typeof answer === 'number' && answer > 0)).toBe(true);
  });

  it('lets the right credentials of a client through, in arrival order, as the checks ahead of them end', async () => {
    const limiter = new MemoryAuthFailureLimiter(2, 60_000);
    await failOnce(limiter, '10.0.0.1');
    // One place is left: the first check takes it, the next two wait for it.
    const first = placeOf(limiter.admit('10.0.0.1'));
    const second = limiter.admit('10.0.0.1') as Promise<Attempt | number>;
    const third = limiter.admit('10.0.0.1') as Promise<Attempt | number>;
    expect(await settled(second)).toBe(false);
    first.release();
    const secondPlace = await second;
    expect(typeof secondPlace).toBe('object');
    expect(await settled(third)).toBe(false);
    (secondPlace as Attempt).release();
    (await third.then((place) => place as Attempt)).release();
    // Right credentials count nothing, however many were checked.
    for (let i = 0; i < 10; i++) placeOf(limiter.admit('10.0.0.1')).release();
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
  });

  it('counts a check once, however often it is ended', async () => {
    const limiter = new MemoryAuthFailureLimiter(2, 60_000);
    const place = placeOf(limiter.admit('10.0.0.1'));
    await place.fail();
    await place.fail();
    place.release();
    expect(limiter.retryAfter('10.0.0.1')).toBe(0);
    await failOnce(limiter, '10.0.0.1');
    expect(limiter.retryAfter('10.0.0.1')).toBeGreaterThan(0);
  });

  it('forgets the least recently seen client at its bound, and only then', async () => {
    const limiter = new MemoryAuthFailureLimiter(1, 60_000, { maxClients: 2 });
    await failOnce(limiter, '10.0.0.1');
    await failOnce(limiter, '10.0.0.2');
    expect(limiter.retryAfter('10.0.0.1')).toBeGreaterThan(0); // 10.0.0.1 is now the most recent
    await failOnce(limiter, '10.0.0.3');
    expect(limiter.size).toBe(2);
    expect(limiter.retryAfter('10.0.0.1')).toBeGreaterThan(0);
    expect(limiter.retryAfter('10.0.0.2')).toBe(0);
    expect(limiter.retryAfter('10.0.0.3')).toBeGreaterThan(0);
  });

  it('costs the same per failure for 1,000,000 distinct clients, and holds at most its bound', () => {
    const limiter = new MemoryAuthFailureLimiter(20, 60_000, { maxClients: 100_000 });
    const { growth, drift, largestSize } = measureFlatCost(
      (client) => void placeOf(limiter.admit(client)).fail(),
      () => limiter.size,
    );
    expect(largestSize).toBe(100_000);
    // A sweep of everything held per new key costs thousands of times more.
    expect(growth).toBeLessThan(20);
    expect(drift).toBeLessThan(3);
  });
});
