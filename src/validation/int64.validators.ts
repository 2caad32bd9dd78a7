import { ValidateBy, type ValidationOptions } from 'class-validator';
import { INT64_MAX, INT64_MIN, isInt64 } from './int64.js';

export const INT64_RULE = `an integer from ${INT64_MIN} to ${INT64_MAX}`;

/**
 * The value is a bigint in the signed 64-bit range. The lossless JSON parser
 * gives every integral JSON number as a bigint, so a string, a fraction,
 * null or an out-of-range number all fail here.
 */
export function IsInt64(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isInt64',
      validator: {
        validate: (value: unknown) => isInt64(value),
        defaultMessage: (args) => `${args?.property} must be ${INT64_RULE}`,
      },
    },
    options,
  );
}
