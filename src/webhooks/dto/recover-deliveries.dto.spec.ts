import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { DtoValidationPipe } from '../../validation/validation.pipe.js';
import { RecoverDeliveriesDto } from './recover-deliveries.dto.js';

const pipe = new DtoValidationPipe();
const problem = (body: unknown): string | undefined => {
  try {
    pipe.transform(body, { type: 'body', metatype: RecoverDeliveriesDto, data: undefined });
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestException);
    return (error as BadRequestException).message;
  }
};

describe('RecoverDeliveriesDto', () => {
  it('takes a date-time that exists', () => {
    expect(problem({ since: '2024-02-29T23:59:59Z' })).toBeUndefined();
  });

  it.each([
    ['2020-02-30T00:00:00Z', '2020-02 has no day 30'],
    ['2021-02-29T00:00:00Z', '2021-02 has no day 29'],
    ['2020-04-31T00:00:00+02:00', '2020-04 has no day 31'],
    ['2016-12-31T23:59:60Z', 'second 60 is not taken (00 to 59)'],
  ])('refuses %s, naming since', (since, reason) => {
    expect(problem({ since })).toBe(`since must be a date and time that exist: ${reason}`);
  });

  it.each(['2020-01-01T24:00:00Z', '2020-01-01T23:60:00Z', 'yesterday', 5])(
    'refuses %j as not an RFC 3339 date-time',
    (since) => {
      expect(problem({ since })).toMatch(/^since must be an RFC 3339 date-time/);
    },
  );
});
