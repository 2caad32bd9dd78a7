import { describe, expect, it } from 'vitest';
import { storableError } from './delivery-attempts.repository.js';

describe('storableError', () => {
  it('keeps a short error as it is, and no error as none', () => {
    expect(storableError('receiver answered 500')).toBe('receiver answered 500');
    expect(storableError(null)).toBeNull();
  });

  it('fits any error text in the 300-character column: cut, NUL left out, no half character', () => {
    const host = `${'a'.repeat(63)}.`.repeat(4).slice(0, 253);
    const long = storableError(`getaddrinfo ENOTFOUND ${host} ${host}`)!;
    expect([...long]).toHaveLength(300);
    expect(long.endsWith('…')).toBe(true);
    expect(storableError('bad\0byte')).toBe('badbyte');
    const emoji = storableError(`${'x'.repeat(298)}🌱🌱🌱`)!;
    expect(emoji).toBe(`${'x'.repeat(298)}…`);
    expect(emoji.isWellFormed()).toBe(true);
  });
});
