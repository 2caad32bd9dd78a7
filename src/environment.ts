import { AuthLimitVariables } from './auth/auth-limits.variables.js';
import { JwtVariables } from './auth/jwt.variables.js';
import { TokenVariables } from './auth/tokens.variables.js';
import { readEnvironment, validateParts } from './config/load-environment.js';
import { ProcessVariables } from './config/process.variables.js';
import { DatabaseVariables } from './database/database.variables.js';
import { FairShareVariables } from './database/fair-share.variables.js';
import { HealthVariables } from './health/health.variables.js';
import { HttpVariables } from './http/http.variables.js';
import { MetricsVariables } from './metrics/metrics.variables.js';
import { RateLimitVariables } from './rate-limit/rate-limit.variables.js';
import { RedisVariables } from './redis/redis.variables.js';
import { WebhookVariables } from './webhooks/webhook.variables.js';

/**
 * Every environment variable the service reads, composed from the classes
 * its parts declare beside their code (`<feature>/<name>.variables.ts`). Each
 * class gives a variable its group and meaning (@Variable), its rule (a
 * decorator of config/environment.decorators.ts, which also gives its type)
 * and its default (the initialiser). Inside the app a part reads its own
 * variables through ConfigService<ItsVariables, true> (config/config.module.ts).
 *
 * docs/CONFIGURATION.md is generated from these classes, in this order: after
 * adding or changing a variable, run `npm run config:docs` (and list it in
 * .env.example). Every property has an initialiser, `= undefined` for the
 * optional ones without a default: validation picks the variables to read
 * from the properties of a new instance, so a variable declared without one
 * would be silently ignored (config/environment.spec.ts checks this).
 */
export const ENVIRONMENT_PARTS = [
  ProcessVariables,
  HttpVariables,
  DatabaseVariables,
  TokenVariables,
  JwtVariables,
  RateLimitVariables,
  AuthLimitVariables,
  FairShareVariables,
  RedisVariables,
  MetricsVariables,
  HealthVariables,
  WebhookVariables,
] as const;

export type Environment = ProcessVariables &
  HttpVariables &
  DatabaseVariables &
  TokenVariables &
  JwtVariables &
  RateLimitVariables &
  AuthLimitVariables &
  FairShareVariables &
  RedisVariables &
  MetricsVariables &
  HealthVariables &
  WebhookVariables;

/**
 * The validated Environment of this process (process.env and a local `.env`
 * file), or of `overrides` alone (tests and tools); throws an
 * InvalidEnvironmentError naming every bad variable, one line each.
 */
export const loadEnvironment = (overrides?: Record<string, unknown>): Environment =>
  readEnvironment(ENVIRONMENT_PARTS, overrides) as Environment;

/** The same check of raw variables, without reading the process's environment. */
export const validateEnvironment = (raw: Record<string, unknown>): Environment =>
  validateParts(ENVIRONMENT_PARTS, raw) as Environment;
