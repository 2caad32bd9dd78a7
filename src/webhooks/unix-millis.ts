import type { ValueTransformer } from 'typeorm';

/**
 * A time as Unix milliseconds in a bigint column, read as a number on both
 * databases (PostgreSQL's driver returns int8 as text). Milliseconds stay far
 * below 2^53, so the number is exact.
 */
export const unixMillis: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};
