import { resolve } from 'node:path';

/** A server the service is measured against. */
export interface Yardstick {
  name: 'same-work' | 'bare' | 'floor' | 'conventional';
  /** One line for the report. */
  description: string;
  script: string;
  /**
   * Its environment besides DATABASE_URL, from the service's (the bench's
   * RATE_LIMIT_MAX, and LOG_LEVEL or RATE_LIMIT_* when --service-env sets them),
   * so that every side logs at one level and counts one quota.
   */
  env(service: Record<string, string>): Record<string, string>;
}

const REFERENCE = resolve('dist/bench/reference/server.js');

/** The settings of the per-request features that every side with those features shares. */
const featureSettings = (service: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(service).filter(([key]) => key === 'LOG_LEVEL' || key.startsWith('RATE_LIMIT_')),
  );

export const YARDSTICKS: readonly Yardstick[] = [
  {
    name: 'same-work',
    description:
      "raw Fastify and the driver with the service's per-request features (bench/reference)",
    script: REFERENCE,
    env: featureSettings,
  },
  {
    name: 'bare',
    description: 'the same without the per-request features (REFERENCE_FEATURES=none)',
    script: REFERENCE,
    env: () => ({ REFERENCE_FEATURES: 'none' }),
  },
  {
    name: 'floor',
    description:
      "the same work on the least of the service's stack: NestJS on Fastify, a guard, a filter, TypeORM's query runner (bench/peers/floor)",
    script: resolve('dist/bench/peers/floor/main.js'),
    env: featureSettings,
  },
  {
    name: 'conventional',
    description: 'NestJS as its documentation teaches, untuned (bench/peers/conventional)',
    script: resolve('dist/bench/peers/conventional/main.js'),
    env: featureSettings,
  },
];
