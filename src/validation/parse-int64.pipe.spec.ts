import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { INT64_MAX, INT64_MIN } from './int64.js';
import { ParseInt64Pipe } from './parse-int64.pipe.js';

const pipe = new ParseInt64Pipe();
const asId = (value: unknown) => pipe.transform(value, { type: 'param', data: 'id' });

describe('ParseInt64Pipe', () => {
  it('reads every int64 exactly, past 2^53 too', () => {
    expect(asId('9223372036854775807')).toBe(INT64_MAX);
    expect(asId('-9223372036854775808')).toBe(INT64_MIN);
    expect(asId('9007199254740993')).toBe(9007199254740993n);
    expect(asId('007')).toBe(7n);
  });

  it('answers 400 naming the parameter for anything else', () => {
    for (const value of [
      '9223372036854775808',
      '-9223372036854775809',
      '1.5',
      '1e3',
      'abc',
      '',
      ' 5',
      undefined,
      ['1'],
    ]) {
      expect(() => asId(value), String(value)).toThrow(
        new BadRequestException(
          'id must be an integer from -9223372036854775808 to 9223372036854775807',
        ),
      );
    }
  });
});
