import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, Max, Min } from 'class-validator';

/*
 * class-transformer @Transform functions that turn environment variable text
 * into the typed values Environment declares. A value they cannot read is
 * passed through unchanged, so that validation names the variable.
 */

const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;

const emptyToUndefined = ({ value }: { value: unknown }): unknown =>
  value === '' ? undefined : value;

const toBoolean = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') return value;
  const text = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(text)) return true;
  if (['false', '0', 'no', 'off'].includes(text)) return false;
  return value;
};

export const toList = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '')
    : value;

/** An integer variable within [min, max]. */
export const IntVariable = (min: number, max: number): PropertyDecorator =>
  applyDecorators(Transform(toInt), IsInt(), Min(min), Max(max));

/** true/false (also 1/0, yes/no, on/off). */
export const BooleanVariable = (): PropertyDecorator =>
  applyDecorators(Transform(toBoolean), IsBoolean());

/** A variable that may be unset (or empty); the rules after it apply when it is set. */
export const OptionalVariable = (): PropertyDecorator =>
  applyDecorators(Transform(emptyToUndefined), IsOptional());
