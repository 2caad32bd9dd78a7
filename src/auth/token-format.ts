import { hash, randomBytes } from 'node:crypto';

const TOKEN_PREFIX = 'pst_';

/** A new token: the prefix and 32 random bytes, base64url (43 characters). */
export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * What is stored instead of the token. A plain SHA-256 suffices: tokens carry
 * 256 random bits, so there is nothing to brute-force that a slow hash would
 * protect, and the lookup stays one indexed query per request.
 */
export function hashToken(token: string): string {
  // One-shot crypto.hash (UTF-8 in, hex out): no Hash object per request, ~1 us less.
  return hash('sha256', token, 'hex');
}
