export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export function isInt64(value: unknown): value is bigint {
  return typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX;
}

/**
 * Reads a decimal integer as written in a URL path (`-42`, `007`) into a
 * bigint; anything else (`1.5`, `1e3`, `0x10`, ` 5`) gives undefined.
 */
export function parseDecimalInteger(text: string): bigint | undefined {
  if (!/^-?\d{1,40}$/.test(text)) return undefined;
  return BigInt(text);
}
