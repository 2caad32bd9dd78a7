import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { type Environment, validateEnvironment } from './environment.js';

/**
 * The only reader of process.env (and of a local `.env` file, whose values
 * the real environment overrides). Tests and tools pass `overrides` instead,
 * which then stand for the whole environment.
 */
export function loadEnvironment(overrides?: Record<string, unknown>): Environment {
  if (overrides) return validateEnvironment(overrides);
  const fromFile = existsSync('.env') ? parseEnv(readFileSync('.env', 'utf8')) : {};
  return validateEnvironment({ ...fromFile, ...process.env });
}
