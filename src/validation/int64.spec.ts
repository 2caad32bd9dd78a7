import { describe, expect, it } from 'vitest';
import { INT64_MAX, INT64_MIN, isInt64, parseDecimalInteger } from './int64.js';

describe('int64', () => {
  it('accepts bigints in range only', () => {
    expect(isInt64(INT64_MIN)).toBe(true);
    expect(isInt64(INT64_MAX)).toBe(true);
    expect(isInt64(INT64_MAX + 1n)).toBe(false);
    expect(isInt64(INT64_MIN - 1n)).toBe(false);
    expect(isInt64(5)).toBe(false);
    expect(isInt64('5')).toBe(false);
    expect(isInt64(null)).toBe(false);
  });

  it('reads decimal path integers and nothing else', () => {
    expect(parseDecimalInteger('-9223372036854775808')).toBe(INT64_MIN);
    expect(parseDecimalInteger('007')).toBe(7n);
    // Leading zeros up to the 100 characters of a path parameter.
    expect(parseDecimalInteger(`${'0'.repeat(99)}7`)).toBe(7n);
    expect(parseDecimalInteger(`-${'0'.repeat(98)}7`)).toBe(-7n);
    for (const text of ['1.5', '1e3', '0x10', ' 5', '+5', '', '-', `${'0'.repeat(100)}7`]) {
      expect(parseDecimalInteger(text), text).toBeUndefined();
    }
  });
});
