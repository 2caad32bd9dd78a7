import { ValidateBy, type ValidationOptions } from 'class-validator';

/** An RFC 3339 date-time's fields; the form itself is IsRFC3339's to check. */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

const isLeapYear = (year: number): boolean =>
  year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

function daysIn(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Why an RFC 3339 date-time names a moment that does not exist (February 30,
 * April 31, February 29 of a year that is not a leap year, hour 24, minute
 * 60…), or undefined when it exists. A text that is not of the form is left
 * to IsRFC3339. `Date.parse` would take `2020-02-30` as March 1 and
 * `24:00` as the next midnight. A second of 60 is refused too: RFC 3339
 * allows it in a leap second only, and JavaScript's dates have none.
 */
export function dateTimeProblem(value: unknown): string | undefined {
  const fields = typeof value === 'string' ? DATE_TIME.exec(value) : null;
  if (!fields) return undefined;
  const [year, month, day, hour, minute, second] = fields.slice(1, 7).map(Number);
  if (month < 1 || month > 12) return `month ${fields[2]} does not exist`;
  if (day < 1 || day > daysIn(year, month)) {
    return `${fields[1]}-${fields[2]} has no day ${fields[3]}`;
  }
  if (hour > 23) return `hour ${fields[4]} does not exist (00 to 23)`;
  if (minute > 59) return `minute ${fields[5]} does not exist (00 to 59)`;
  if (second > 59) return `second ${fields[6]} is not taken (00 to 59)`;
  if (fields[7] !== undefined && (Number(fields[7]) > 23 || Number(fields[8]) > 59)) {
    return `offset ${fields[7]}:${fields[8]} does not exist (at most 23:59)`;
  }
  return undefined;
}

/** A date-time whose day, hour, minute, second and offset exist (see dateTimeProblem). */
export function IsExistingDateTime(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isExistingDateTime',
      validator: {
        validate: (value: unknown) => dateTimeProblem(value) === undefined,
        defaultMessage: (args) =>
          `${args?.property} must be a date and time that exist: ${dateTimeProblem(args?.value)}`,
      },
    },
    options,
  );
}
