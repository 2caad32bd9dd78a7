import { describe, expect, it } from 'vitest';
import {
  arrivalScope,
  currentParty,
  laterOnBehalfOfThisRequest,
  ownerParty,
  ownerScope,
  remainingMs,
  withDeadline,
  within,
} from './request-scope.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the request scope', () => {
  it("carries the deadline and the party through the request's async work", async () => {
    await withDeadline(
      Date.now() + 1000,
      async () => {
        await nextTurn();
        expect(remainingMs()).toBeGreaterThan(0);
        expect(currentParty()).toBe('owner:alice');
      },
      ownerParty('alice'),
    );
  });

  it("counts a request's deadline from its arrival, and keeps it once its owner is known", () => {
    // Arrived 300 ms ago, with 1000 ms for its database work.
    const arrived = arrivalScope(1000, 300, '192.0.2.7');
    expect(arrived.party).toBe('address:192.0.2.7');
    expect(arrived.expiresAt! - Date.now()).toBeGreaterThan(600);
    expect(arrived.expiresAt! - Date.now()).toBeLessThanOrEqual(700);
    expect(ownerScope(arrived, 'alice')).toEqual({
      expiresAt: arrived.expiresAt,
      party: 'owner:alice',
    });
    // A public route's work (health): a deadline, and the background party.
    const unauthenticated = arrivalScope(1000, 0);
    expect(within(unauthenticated, currentParty)).toBe('background');
    expect(unauthenticated.party).toBeUndefined();
  });

  it('is the background party, with no deadline, outside a request', () => {
    expect(remainingMs()).toBeUndefined();
    expect(currentParty()).toBe('background');
  });

  it("runs work taken for later on the request's party without its deadline, wherever it is called from", async () => {
    const later = withDeadline(Date.now() + 1000, laterOnBehalfOfThisRequest, ownerParty('alice'));
    // Called from outside the request's async context, as a stream pulls its next page.
    await nextTurn();
    expect(later(() => [currentParty(), remainingMs()])).toEqual(['owner:alice', undefined]);
  });

  it('enters no scope for later work when the request had none (SQLite)', () => {
    const later = laterOnBehalfOfThisRequest();
    expect(later(() => currentParty())).toBe('background');
  });
});
