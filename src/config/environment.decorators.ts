import { isIP } from 'node:net';
import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsBoolean, IsInt, IsOptional, Max, Min, ValidateBy } from 'class-validator';

/*
 * class-transformer @Transform functions that turn environment variable text
 * into the typed values Environment declares. A value they cannot read is
 * passed through unchanged, so that validation names the variable.
 */

const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value.trim()) : value;

export const emptyToUndefined = ({ value }: { value: unknown }): unknown =>
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

/** Fastify's `trustProxy`: off, every hop, a hop count, or the proxies' addresses and CIDRs. */
export type TrustProxy = boolean | number | string[];

const toTrustProxy = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (['', 'false'].includes(text.toLowerCase())) return false;
  if (text.toLowerCase() === 'true') return true;
  if (/^\d+$/.test(text)) return Number(text);
  return toList({ value: text });
};

const isAddressOrCidr = (item: string): boolean => {
  const [address, prefix, ...rest] = item.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return (
    prefix === undefined ||
    (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
  );
};

/** true, false, a hop count (0-100), or a comma-separated list of addresses and CIDRs. */
export const TrustProxyVariable = (): PropertyDecorator =>
  applyDecorators(
    Transform(toTrustProxy),
    ValidateBy({
      name: 'isTrustProxy',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'boolean' ||
          (Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 100) ||
          (Array.isArray(value) &&
            value.length > 0 &&
            value.every((item) => typeof item === 'string' && isAddressOrCidr(item))),
        defaultMessage: () =>
          'TRUST_PROXY must be true, false, a hop count, or a comma-separated list of proxy addresses or CIDRs such as 10.0.0.0/8,127.0.0.1',
      },
    }),
  );

/** Asymmetric JWS algorithms an access token may be signed with: never `none`, never HMAC. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An identity provider's URL: https, or http on a loopback address (local providers, tests). */
export function isIdentityProviderUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (
    url.protocol === 'https:' ||
    (url.protocol === 'http:' &&
      (LOOPBACK_HOSTS.has(url.hostname) ||
        (isIP(url.hostname) === 4 && url.hostname.startsWith('127.'))))
  );
}

export const IdentityProviderUrlVariable = (name: string): PropertyDecorator =>
  ValidateBy({
    name: 'isIdentityProviderUrl',
    validator: {
      validate: isIdentityProviderUrl,
      defaultMessage: () => `${name} must be an https:// URL (http:// only on a loopback address)`,
    },
  });
