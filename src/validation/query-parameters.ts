import { BadRequestException } from '@nestjs/common';

/**
 * The value of the one parameter a query may carry (undefined when absent);
 * any other parameter is a 400 that names it, so that a typo is never
 * silently ignored.
 */
export function onlyParameter(query: unknown, name: string): unknown {
  const { [name]: value, ...others } = (query ?? {}) as Record<string, unknown>;
  const unknown = Object.keys(others);
  if (unknown.length > 0) {
    throw new BadRequestException(
      unknown.map((other) => `property ${other} should not exist`).join('; '),
    );
  }
  return value;
}
