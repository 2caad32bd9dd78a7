const JSON_NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Integers with more digits than this cannot be int64; they stay floating point. */
const MAX_INTEGER_DIGITS = 40;

/**
 * Turns the text of a JSON number into a bigint when its exact value is an
 * integer (`5`, `5.0`, `1e3`, `9223372036854775807`), and into a JS number
 * otherwise (`1.5`, `1e400`). JSON.parse would round 9007199254740993 to
 * ...992; reading the digits keeps every integer exact.
 */
export function parseJsonNumber(text: string): bigint | number {
  const match = JSON_NUMBER.exec(text);
  if (!match) return Number(text);
  const [, sign, whole, fraction = '', exponentText = '0'] = match;
  let digits = (whole + fraction).replace(/^0+(?=\d)/, '');
  let exponent = Number(exponentText) - fraction.length;
  while (exponent < 0 && digits.endsWith('0') && digits.length > 1) {
    digits = digits.slice(0, -1);
    exponent += 1;
  }
  if (digits === '0') return 0n;
  if (exponent < 0 || digits.length + exponent > MAX_INTEGER_DIGITS) {
    return Number(text);
  }
  const magnitude = BigInt(digits + '0'.repeat(exponent));
  return sign === '-' ? -magnitude : magnitude;
}
