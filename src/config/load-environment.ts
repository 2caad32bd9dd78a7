import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { Environment } from './environment.js';

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

/**
 * Turns raw variables into a validated Environment. Throws one error that
 * names every bad variable.
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
  if (errors.length > 0) {
    // Values are left out on purpose: DATABASE_URL and BOOTSTRAP_TOKEN hold secrets.
    const lines = errors.flatMap((e) =>
      Object.values(e.constraints ?? {}).map((message) => `  ${message}`),
    );
    throw new Error(`Invalid environment configuration:\n${lines.join('\n')}`);
  }
  return env;
}
