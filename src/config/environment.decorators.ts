import { isIP } from 'node:net';
import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsOptional, ValidateBy, ValidateIf, type ValidationArguments } from 'class-validator';
import { recordVariable, isSecretVariable, type VariableKind } from './variable-metadata.js';

/*
 * One decorator per kind of variable. Each one turns the variable's text into
 * its typed value (class-transformer), checks it with exactly one rule
 * (class-validator), and records its type and what it allows for the
 * configuration reference and the start-up error: so a bad value is one
 * line, `NAME: <value> <problem>; allowed: <what is allowed>`.
 *
 * A value a transform cannot read is passed through unchanged, so that the
 * rule reports it.
 */

/** The value as an error shows it: quoted, shortened, or hidden when the variable holds a secret. */
function shown(args: ValidationArguments, value: unknown = args.value): string {
  if (isSecretVariable(args.object, args.property)) return 'the value';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/**
 * A variable of `kind`: `check` returns the problem with the value, as a
 * phrase that follows the value ("is above the maximum 10"), or undefined
 * when the value is allowed.
 */
function variableRule(
  kind: VariableKind,
  check: (value: unknown, args: ValidationArguments) => string | undefined,
): PropertyDecorator {
  const rule = ValidateBy({
    name: 'environmentVariable',
    validator: {
      validate: (value: unknown, args) => check(value, args as ValidationArguments) === undefined,
      defaultMessage: (args) => check((args as ValidationArguments).value, args!) ?? '',
    },
  });
  return (target, property) => {
    recordVariable(target, property, kind);
    rule(target, property);
  };
}

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

const toList = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '')
    : value;

/** An integer variable within [min, max]. */
export const IntVariable = (min: number, max: number): PropertyDecorator =>
  applyDecorators(
    Transform(toInt),
    variableRule(
      { type: 'integer', allowed: `an integer from ${min} to ${max}` },
      (value, args) => {
        if (!Number.isSafeInteger(value)) return `${shown(args)} is not a whole number`;
        if ((value as number) < min) return `${shown(args)} is below the minimum ${min}`;
        if ((value as number) > max) return `${shown(args)} is above the maximum ${max}`;
        return undefined;
      },
    ),
  );

/** true/false (also 1/0, yes/no, on/off). */
export const BooleanVariable = (): PropertyDecorator =>
  applyDecorators(
    Transform(toBoolean),
    variableRule(
      { type: 'boolean', allowed: 'true or false (also 1/0, yes/no, on/off)' },
      (value, args) => (typeof value === 'boolean' ? undefined : `${shown(args)} is not a boolean`),
    ),
  );

/** One of a fixed set of words. */
export const OneOfVariable = (values: readonly string[]): PropertyDecorator =>
  variableRule({ type: 'enum', allowed: `one of ${values.join(', ')}` }, (value, args) =>
    typeof value === 'string' && values.includes(value)
      ? undefined
      : `${shown(args)} is not one of the allowed values`,
  );

/** Text of the form `pattern` matches, which `allowed` describes to a person. */
export const PatternVariable = (
  type: string,
  pattern: RegExp,
  allowed: string,
): PropertyDecorator =>
  variableRule({ type, allowed }, (value, args) =>
    typeof value === 'string' && pattern.test(value)
      ? undefined
      : `${shown(args)} is not in the allowed form`,
  );

/** A comma-separated list (empty allowed) whose every item passes `isItem`. */
export const ListVariable = (
  allowed: string,
  isItem: (item: string) => boolean,
): PropertyDecorator =>
  applyDecorators(
    Transform(toList),
    variableRule({ type: 'list', allowed }, (value, args) => {
      if (!Array.isArray(value)) return `${shown(args)} is not a comma-separated list`;
      const bad: unknown = value.find((item) => typeof item !== 'string' || !isItem(item));
      return bad === undefined ? undefined : `the item ${shown(args, bad)} is not valid`;
    }),
  );

/** A variable that may be unset (or empty); its rule applies when it is set. */
export const OptionalVariable = (): PropertyDecorator =>
  applyDecorators(Transform(emptyToUndefined), IsOptional());

/**
 * A variable that must be set, to any text, whenever `other` is set; unset
 * (or empty) otherwise allowed.
 */
export const RequiredWithVariable = (other: string): PropertyDecorator =>
  applyDecorators(
    Transform(emptyToUndefined),
    ValidateIf(
      (env: Record<string, unknown>, value: unknown) =>
        env[other] !== undefined || value !== undefined,
    ),
    variableRule({ type: 'string', allowed: `any text, required with ${other}` }, (value) =>
      typeof value === 'string' ? undefined : `no value, but ${other} is set`,
    ),
  );

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
    variableRule(
      {
        type: 'proxies',
        allowed:
          'true, false, a hop count from 0 to 100, or a comma-separated list of proxy addresses ' +
          'or CIDRs such as 10.0.0.0/8,127.0.0.1',
      },
      (value, args) => {
        if (typeof value === 'boolean') return undefined;
        if (typeof value === 'number')
          return value <= 100 ? undefined : `${shown(args)} is above the maximum 100 hops`;
        if (!Array.isArray(value) || value.length === 0) return `${shown(args)} is not allowed`;
        const bad: unknown = value.find(
          (item) => typeof item !== 'string' || !isAddressOrCidr(item),
        );
        return bad === undefined
          ? undefined
          : `the item ${shown(args, bad)} is not an IP address or CIDR`;
      },
    ),
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

export const IdentityProviderUrlVariable = (): PropertyDecorator =>
  variableRule(
    { type: 'URL', allowed: 'an https:// URL (http:// only on a loopback address)' },
    (value, args) =>
      isIdentityProviderUrl(value) ? undefined : `${shown(args)} is not an allowed URL`,
  );
