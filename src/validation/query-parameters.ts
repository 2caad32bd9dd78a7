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
