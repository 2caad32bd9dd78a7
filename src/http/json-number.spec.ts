import { describe, expect, it } from 'vitest';
import { parseJsonNumber } from './json-number.js';

describe('parseJsonNumber', () => {
  it.each([
    ['0', 0n],
    ['-0', 0n],
    ['42', 42n],
    ['-42', -42n],
    ['9007199254740993', 9007199254740993n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
    ['9223372036854775808', 9223372036854775808n],
    ['5.0', 5n],
    ['5.000', 5n],
    ['1e3', 1000n],
    ['1E+3', 1000n],
    ['1.5e1', 15n],
    ['12300e-2', 123n],
    ['0.0', 0n],
  ])('reads the integer %s exactly as a bigint', (text, expected) => {
    expect(parseJsonNumber(text)).toBe(expected);
  });

  it.each([
    ['1.5', 1.5],
    ['-0.25', -0.25],
    ['1e-3', 0.001],
    ['1.0000000000000000001', 1],
  ])('keeps the fraction %s a number (never an integer)', (text, expected) => {
    const value = parseJsonNumber(text);
    expect(typeof value).toBe('number');
    expect(value).toBe(expected);
  });

  it('does not build enormous bigints from enormous exponents', () => {
    expect(parseJsonNumber('1e400')).toBe(Infinity);
    expect(typeof parseJsonNumber('1e41')).toBe('number');
    expect(parseJsonNumber('1e39')).toBe(10n ** 39n);
  });
});
