import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { limitRule, parseLimit, queryParameters } from './query-parameters.js';

describe('parseLimit', () => {
  it('reads plain digits inside the range, its bounds included', () => {
    expect(parseLimit('0', { min: 0, max: 1000 })).toBe(0);
    expect(parseLimit('1000', { min: 0, max: 1000 })).toBe(1000);
    expect(parseLimit('0042', { min: 1, max: 1000 })).toBe(42);
    expect(parseLimit('2147483647', { min: 0, max: 2_147_483_647 })).toBe(2_147_483_647);
  });

  it.each([
    [{ min: 0, max: 1000 }, 'limit must be an integer from 0 to 1000'],
    [{ min: 1, max: 1000 }, 'limit must be an integer from 1 to 1000'],
    [{ min: 0, max: 2_147_483_647 }, 'limit must be an integer from 0 to 2147483647'],
  ])('answers 400 outside %j in one wording: %s', (range, message) => {
    expect(limitRule(range)).toBe(message);
    const outside = [String(range.min - 1), String(range.max + 1), '9'.repeat(100_000)];
    for (const limit of [...outside, 'abc', '1.5', '1e3', ' 1', '+1', '0x10', '', ['1', '2']]) {
      expect(() => parseLimit(limit, range), JSON.stringify(limit).slice(0, 20)).toThrow(
        new BadRequestException(message),
      );
    }
  });
});

describe('queryParameters', () => {
  it('returns the named parameters and refuses any other, naming each', () => {
    expect(queryParameters({ limit: '1' }, 'limit', 'after')).toEqual({ limit: '1' });
    expect(queryParameters(undefined, 'limit')).toEqual({});
    expect(() => queryParameters({ limit: '1', colour: 'red', size: 'L' }, 'limit')).toThrow(
      new BadRequestException('property colour should not exist; property size should not exist'),
    );
  });
});
