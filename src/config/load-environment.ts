import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { describeVariables } from './variable-metadata.js';

/** A class that declares variables (a part of the Environment, src/environment.ts). */
export type VariablesClass = new () => object;

/**
 * The only reader of process.env (and of a local `.env` file, whose values
 * the real environment overrides), called once per process by the app
 * (app.setup.ts) and the command-line tools through src/environment.ts,
 * which names the parts. Tests and tools pass `overrides` instead, which
 * then stand for the whole environment.
 */
export function readEnvironment(
  parts: readonly VariablesClass[],
  overrides?: Record<string, unknown>,
): object {
  if (overrides) return validateParts(parts, overrides);
  const fromFile = existsSync('.env') ? parseEnv(readFileSync('.env', 'utf8')) : {};
  return validateParts(parts, { ...fromFile, ...process.env });
}

/** One bad variable: its name, and one line that says what is wrong and what is allowed. */
export interface EnvironmentProblem {
  variable: string;
  message: string;
}

/** The variables that stop start-up; its message has one line per variable. */
export class InvalidEnvironmentError extends Error {
  constructor(readonly problems: EnvironmentProblem[]) {
    super(problems.map((problem) => problem.message).join('\n'));
    this.name = 'InvalidEnvironmentError';
  }
}

/**
 * Turns raw variables into one object holding every part's validated
 * variables, or throws an InvalidEnvironmentError naming every bad variable,
 * one line each, in the parts' order. The value of a secret variable is never
 * shown (environment.decorators.ts).
 */
export function validateParts(
  parts: readonly VariablesClass[],
  raw: Record<string, unknown>,
): object {
  const problems: EnvironmentProblem[] = [];
  const values = parts.map((Part) => {
    const relevant: Record<string, unknown> = {};
    for (const key of Object.keys(new Part())) {
      if (raw[key] !== undefined) relevant[key] = raw[key];
    }
    const part = plainToInstance(Part, relevant, { exposeDefaultValues: true });
    const errors = validateSync(part, { skipMissingProperties: false });
    if (errors.length > 0) {
      const allowed = new Map(describeVariables(Part).map((v) => [v.name, v.allowed]));
      for (const error of errors) {
        // One rule per variable (environment.decorators.ts), so one problem.
        const problem = Object.values(error.constraints ?? {})[0] ?? 'is not allowed';
        problems.push({
          variable: error.property,
          message: `${error.property}: ${problem}; allowed: ${allowed.get(error.property)}`,
        });
      }
    }
    return part;
  });
  if (problems.length > 0) throw new InvalidEnvironmentError(problems);
  return Object.assign({}, ...values) as object;
}
