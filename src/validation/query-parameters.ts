import { BadRequestException } from '@nestjs/common';

/**
 * The values of the parameters a query may carry (undefined when absent);
 * any other parameter is a 400 that names it, so that a typo is never
 * silently ignored.
 */
export function queryParameters<Name extends string>(
  query: unknown,
  ...names: Name[]
): Partial<Record<Name, unknown>> {
  const values: Partial<Record<Name, unknown>> = {};
  const unknown: string[] = [];
  for (const [key, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if ((names as string[]).includes(key)) values[key as Name] = value;
    else unknown.push(key);
  }
  if (unknown.length > 0) {
    throw new BadRequestException(
      unknown.map((other) => `property ${other} should not exist`).join('; '),
    );
  }
  return values;
}

/** The values a list's `limit` query parameter takes, each list its own. */
export interface LimitRange {
  readonly min: number;
  readonly max: number;
}

/** The 400 message for a bad `limit`: one wording on every list, its own range. */
export const limitRule = ({ min, max }: LimitRange): string =>
  `limit must be an integer from ${min} to ${max}`;

/**
 * Reads a `limit` query parameter: plain decimal digits from `min` to `max`;
 * "1.5", "-1", "1e3", " 1", "" and a repeated limit are a 400 with limitRule.
 * Digits are counted before they are read, so a megabyte of them costs no
 * more than a short one.
 */
export function parseLimit(value: unknown, range: LimitRange): number {
  if (
    typeof value === 'string' &&
    value.length <= String(range.max).length &&
    /^\d+$/.test(value)
  ) {
    const limit = Number(value);
    if (limit >= range.min && limit <= range.max) return limit;
  }
  throw new BadRequestException(limitRule(range));
}
