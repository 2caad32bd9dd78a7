import { describe, expect, it } from 'vitest';
import { dateTimeProblem } from './date-time.validators.js';

describe('dateTimeProblem', () => {
  it.each([
    ['2020-02-30T00:00:00Z', '2020-02 has no day 30'],
    ['2020-04-31T12:00:00Z', '2020-04 has no day 31'],
    ['2021-02-29T12:00:00Z', '2021-02 has no day 29'],
    ['1900-02-29T12:00:00Z', '1900-02 has no day 29'],
    ['2020-01-00T12:00:00Z', '2020-01 has no day 00'],
    ['2020-13-01T12:00:00Z', 'month 13 does not exist'],
    ['2020-01-01T24:00:00Z', 'hour 24 does not exist (00 to 23)'],
    ['2020-01-01T23:60:00Z', 'minute 60 does not exist (00 to 59)'],
    ['2016-12-31T23:59:60Z', 'second 60 is not taken (00 to 59)'],
    ['2020-01-01T12:00:00+24:00', 'offset 24:00 does not exist (at most 23:59)'],
    ['2020-01-01T12:00:00-05:60', 'offset 05:60 does not exist (at most 23:59)'],
  ])('refuses %s: %s', (value, problem) => {
    expect(dateTimeProblem(value)).toBe(problem);
  });

  it.each([
    '2020-02-29T00:00:00Z',
    '2000-02-29T23:59:59.999Z',
    '2021-04-30T12:00:00+02:00',
    '2021-12-31t23:59:59z',
    '2021-01-31 00:00:00-23:59',
  ])('takes %s', (value) => {
    expect(dateTimeProblem(value)).toBeUndefined();
  });

  it('leaves what is not an RFC 3339 date-time to the format check', () => {
    for (const value of ['yesterday', '2026-11-24', 5, undefined]) {
      expect(dateTimeProblem(value)).toBeUndefined();
    }
  });
});
