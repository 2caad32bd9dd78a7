export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

export function isInt64(value: unknown): value is bigint {
  return typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX;
}

/** The longest path parameter the router takes (Fastify's maxParamLength); longer is a 414. */
export const MAX_PATH_PARAMETER_LENGTH = 100;

/**
 * Reads a decimal integer as written in a URL path (`-42`, `007`) into a
 * bigint; anything else (`1.5`, `1e3`, `0x10`, ` 5`) gives undefined.
 */
export function parseDecimalInteger(text: string): bigint | undefined {
  // Leading zeros are allowed however many (`007` is 7) within the longest
  // path parameter the router passes on; past it, the router answers 414.
  if (text.length > MAX_PATH_PARAMETER_LENGTH || !/^-?\d+$/.test(text)) return undefined;
  return BigInt(text);
}
