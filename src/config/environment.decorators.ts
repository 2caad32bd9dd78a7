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
export function shown(args: ValidationArguments, value: unknown = args.value): string {
  if (isSecretVariable(args.object, args.property)) return 'the value';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/**
 * A variable of `kind`: `check` returns the problem with the value, as a
 * phrase that follows the value ("is above the maximum 10"), or undefined
 * when the value is allowed.
 */
export function variableRule(
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

export const toList = ({ value }: { value: unknown }): unknown =>
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
