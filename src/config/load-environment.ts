import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { Environment } from './environment.js';
import { describeVariables } from './variable-metadata.js';

/**
 * The only reader of process.env (and of a local `.env` file, whose values
 * the real environment overrides), called once per process by the app
 * (app.setup.ts) and the command-line tools. Tests and tools pass
 * `overrides` instead, which then stand for the whole environment.
 */
export function loadEnvironment(overrides?: Record<string, unknown>): Environment {
  if (overrides) return validateEnvironment(overrides);
  const fromFile = existsSync('.env') ? parseEnv(readFileSync('.env', 'utf8')) : {};
  return validateEnvironment({ ...fromFile, ...process.env });
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
 * Turns raw variables into a validated Environment, or throws an
 * InvalidEnvironmentError naming every bad variable, one line each. The
 * value of a secret variable is never shown (environment.decorators.ts).
 */
export function validateEnvironment(raw: Record<string, unknown>): Environment {
  const relevant: Record<string, unknown> = {};
  for (const key of Object.keys(new Environment())) {
    if (raw[key] !== undefined) relevant[key] = raw[key];
  }
  const env = plainToInstance(Environment, relevant, {
    exposeDefaultValues: true,
  });
  const errors = validateSync(env, { skipMissingProperties: false });
  if (errors.length === 0) return env;
  const allowed = new Map(describeVariables(Environment).map((v) => [v.name, v.allowed]));
  throw new InvalidEnvironmentError(
    errors.map((error) => {
      // One rule per variable (environment.decorators.ts), so one problem.
      const problem = Object.values(error.constraints ?? {})[0] ?? 'is not allowed';
      return {
        variable: error.property,
        message: `${error.property}: ${problem}; allowed: ${allowed.get(error.property)}`,
      };
    }),
  );
}
