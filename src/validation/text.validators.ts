import { ValidateBy, type ValidationOptions } from 'class-validator';

export interface TextRule {
  minCodePoints: number;
  maxCodePoints: number;
}

/** Why a value breaks the rule, or undefined when it keeps it. */
export function textProblem(value: unknown, rule: TextRule): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (!value.isWellFormed()) return 'must not contain an unpaired surrogate (e.g. "\\ud800")';
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  // Counted in Unicode code points, as PostgreSQL's varchar(n) counts them.
  let length = 0;
  for (const _ of value) length += 1;
  if (length < rule.minCodePoints) return 'must not be empty';
  if (length > rule.maxCodePoints) {
    return `must be at most ${rule.maxCodePoints} characters long (it has ${length})`;
  }
  return undefined;
}

/**
 * A string that both databases store and return exactly: well-formed UTF-16
 * (no unpaired surrogate), no NUL, length in code points within the rule.
 */
export function IsStorableText(rule: TextRule, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStorableText',
      validator: {
        validate: (value: unknown) => textProblem(value, rule) === undefined,
        defaultMessage: (args) =>
          `${args?.property} ${textProblem(args?.value, rule) ?? 'is invalid'}`,
      },
    },
    options,
  );
}
