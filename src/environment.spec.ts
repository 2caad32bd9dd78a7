import { getMetadataStorage } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { JWT_ALGORITHMS } from './auth/jwt.variables.js';
import { InvalidEnvironmentError } from './config/load-environment.js';
import { ENVIRONMENT_PARTS, validateEnvironment } from './environment.js';

/** The lines validateEnvironment stops with for `raw`. */
function problemLines(raw: Record<string, unknown>): string[] {
  try {
    validateEnvironment(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidEnvironmentError);
    return (error as Error).message.split('\n');
  }
  throw new Error(`${JSON.stringify(raw)} was accepted`);
}

describe('validateEnvironment', () => {
  it('fills every default', () => {
    expect({ ...validateEnvironment({}) }).toEqual({
      NODE_ENV: 'development',
      PORT: 3000,
      HOST: '127.0.0.1',
      DATABASE_URL: 'sqlite:./data/plant-store.sqlite',
      DB_POOL_SIZE: 10,
      DB_CONNECT_TIMEOUT_MS: 5000,
      DB_STATEMENT_TIMEOUT_MS: 10000,
      DB_REQUEST_DEADLINE_MS: 10000,
      BODY_LIMIT_BYTES: 65536,
      LOG_LEVEL: 'info',
      METRICS_ENABLED: true,
      SHUTDOWN_DRAIN_MS: 5000,
      SHUTDOWN_TIMEOUT_MS: 10000,
      APP_ROLE: 'all',
      DB_MIGRATE_ON_START: true,
      CORS_ORIGINS: [],
      HTTP_REQUEST_TIMEOUT_MS: 30000,
      HTTP_IDLE_TIMEOUT_MS: 60000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 5000,
      RATE_LIMIT_ENABLED: true,
      RATE_LIMIT_WINDOW_MS: 60000,
      RATE_LIMIT_MAX: 1200,
      AUTH_FAILURE_LIMIT: 20,
      AUTH_REFUSAL_RATE: 20,
      AUTH_REFUSAL_DELAY_MS: 1000,
      FAIR_SHARE_ENABLED: true,
      FAIR_SHARE_MAX_IN_FLIGHT: 64,
      TRUST_PROXY: false,
      AUTH_JWT_OWNER_CLAIM: 'sub',
      AUTH_JWT_ALGORITHMS: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      AUTH_JWT_CLOCK_TOLERANCE_S: 30,
      AUTH_JWT_REQUIRE_SCOPES: false,
      AUTH_JWT_JWKS_COOLDOWN_MS: 10000,
      AUTH_JWT_JWKS_REFRESH_MS: 600000,
      HEALTH_DB_TIMEOUT_MS: 1000,
      BOOTSTRAP_OWNER: 'demo',
      WEBHOOK_RETRY_SCHEDULE: '5s,30s,2m,10m,1h,6h,24h',
      WEBHOOK_TIMEOUT_MS: 10000,
      WEBHOOK_ALLOW_HTTP: false,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: false,
      WEBHOOK_POLL_INTERVAL_MS: 1000,
      WEBHOOK_CONCURRENCY: 16,
      WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: 4,
      WEBHOOK_LEASE_MS: 60000,
      WEBHOOK_MAX_SUBSCRIPTIONS: 20,
      WEBHOOK_SECRET_OVERLAP: '24h',
      WEBHOOK_RETENTION: '30d',
    });
  });

  it('refuses an APP_ROLE that is not all, api or worker, naming the variable', () => {
    expect(problemLines({ APP_ROLE: 'both' })).toEqual([
      'APP_ROLE: "both" is not one of the allowed values; allowed: one of all, api, worker',
    ]);
  });

  it('refuses a webhook retry schedule that is not a list of durations, naming the variable', () => {
    expect(
      validateEnvironment({ WEBHOOK_RETRY_SCHEDULE: '100ms, 2s,1d' }).WEBHOOK_RETRY_SCHEDULE,
    ).toBe('100ms, 2s,1d');
    for (const schedule of ['', '5', '5s,', '5x', '-5s', '1.5s']) {
      expect(() => validateEnvironment({ WEBHOOK_RETRY_SCHEDULE: schedule }), schedule).toThrow(
        /^WEBHOOK_RETRY_SCHEDULE: .* is not in the allowed form; allowed: comma-separated durations/,
      );
    }
  });

  it('refuses a per-subscription webhook concurrency that is not a positive integer, naming the variable', () => {
    expect(
      validateEnvironment({ WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: '1' })
        .WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION,
    ).toBe(1);
    for (const value of ['0', '-1', '2.5', 'many', '257']) {
      expect(
        () => validateEnvironment({ WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: value }),
        value,
      ).toThrow(/WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION/);
    }
  });

  it('refuses a webhook retention that is not one duration, naming the variable', () => {
    expect(validateEnvironment({ WEBHOOK_RETENTION: '12h' }).WEBHOOK_RETENTION).toBe('12h');
    for (const retention of ['', '30', '30d,1h', 'forever', '-1d']) {
      expect(() => validateEnvironment({ WEBHOOK_RETENTION: retention }), retention).toThrow(
        /^WEBHOOK_RETENTION: .* is not in the allowed form; allowed: a duration such as 30d/,
      );
    }
  });

  it('reads booleans and lists', () => {
    const env = validateEnvironment({
      METRICS_ENABLED: 'false',
      RATE_LIMIT_ENABLED: '0',
      CORS_ORIGINS: 'https://a.example, http://localhost:5173',
    });
    expect(env.METRICS_ENABLED).toBe(false);
    expect(env.RATE_LIMIT_ENABLED).toBe(false);
    expect(env.CORS_ORIGINS).toEqual(['https://a.example', 'http://localhost:5173']);
  });

  it('reads numbers and takes postgres URLs', () => {
    const env = validateEnvironment({
      PORT: '8080',
      DATABASE_URL: 'postgres://u:p@db:5432/plants',
    });
    expect(env.PORT).toBe(8080);
    expect(env.DATABASE_URL).toBe('postgres://u:p@db:5432/plants');
  });

  it.each([
    ['', false],
    ['false', false],
    ['true', true],
    ['2', 2],
    ['127.0.0.1', ['127.0.0.1']],
    ['10.0.0.0/8, ::1, fd00::/8', ['10.0.0.0/8', '::1', 'fd00::/8']],
  ])('reads TRUST_PROXY=%j as %j', (value, expected) => {
    expect(validateEnvironment({ TRUST_PROXY: value }).TRUST_PROXY).toEqual(expected);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['NODE_ENV', 'staging'],
    ['DATABASE_URL', 'mysql://x'],
    ['BOOTSTRAP_TOKEN', 'short'],
    ['BOOTSTRAP_OWNER', 'has space'],
    ['BODY_LIMIT_BYTES', '-1'],
    ['DB_POOL_SIZE', '0'],
    ['METRICS_ENABLED', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['CORS_ORIGINS', 'not an origin'],
    ['REDIS_URL', 'http://redis'],
    ['AUTH_JWT_ISSUER', 'http://idp.example.com/realms/plants'],
    ['AUTH_JWT_ISSUER', 'not a url'],
    ['AUTH_JWT_ISSUER', 'http://127.attacker.example'],
    ['AUTH_JWT_JWKS_URI', 'ftp://idp.example.com/jwks'],
    ['AUTH_JWT_ALGORITHMS', 'RS256,HS256'],
    ['AUTH_JWT_ALGORITHMS', 'none'],
    ['AUTH_JWT_CLOCK_TOLERANCE_S', '3600'],
    ['TRUST_PROXY', 'yes please'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', '10.0.0.1,proxy.example'],
    ['TRUST_PROXY', '1000'],
  ])('stops with a message naming %s when it is %j', (name, value) => {
    // One line for the variable (a bad issuer also leaves the audience it requires missing).
    const lines = problemLines({ [name]: value }).filter((line) => line.startsWith(`${name}:`));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${name}: .+; allowed: .+`));
  });

  it('stops with exactly one line for a bad PORT, naming the problem and what is allowed', () => {
    expect(problemLines({ PORT: 'abc' })).toEqual([
      'PORT: "abc" is not a whole number; allowed: an integer from 0 to 65535',
    ]);
    expect(problemLines({ PORT: '70000' })).toEqual([
      'PORT: 70000 is above the maximum 65535; allowed: an integer from 0 to 65535',
    ]);
    expect(problemLines({ DB_POOL_SIZE: '0' })).toEqual([
      'DB_POOL_SIZE: 0 is below the minimum 1; allowed: an integer from 1 to 1000',
    ]);
  });

  it('stops with one line per bad variable, several at once, and names the bad item of a list', () => {
    expect(
      problemLines({
        PORT: 'abc',
        METRICS_ENABLED: 'maybe',
        HOST: 'fine.example',
        AUTH_JWT_ALGORITHMS: 'RS256,HS256',
        TRUST_PROXY: '10.0.0.1,proxy.example',
      }),
    ).toEqual([
      'PORT: "abc" is not a whole number; allowed: an integer from 0 to 65535',
      'TRUST_PROXY: the item "proxy.example" is not an IP address or CIDR; allowed: true, false, a hop count from 0 to 100, or a comma-separated list of proxy addresses or CIDRs such as 10.0.0.0/8,127.0.0.1',
      `AUTH_JWT_ALGORITHMS: the item "HS256" is not valid; allowed: a comma-separated list of ${JWT_ALGORITHMS.join(', ')}`,
      'METRICS_ENABLED: "maybe" is not a boolean; allowed: true or false (also 1/0, yes/no, on/off)',
    ]);
  });

  it('names every bad variable in the error it throws, for the start-up failure lines', () => {
    const error = (() => {
      try {
        validateEnvironment({ PORT: 'abc', LOG_LEVEL: 'loud' });
      } catch (thrown) {
        return thrown as InvalidEnvironmentError;
      }
    })();
    expect(error?.problems.map((problem) => problem.variable)).toEqual(['LOG_LEVEL', 'PORT']);
  });

  it('takes an https issuer, or http on loopback, and then needs an audience', () => {
    expect(problemLines({ AUTH_JWT_ISSUER: 'https://idp.example.com' })).toEqual([
      'AUTH_JWT_AUDIENCE: no value, but AUTH_JWT_ISSUER is set; allowed: any text, required with AUTH_JWT_ISSUER',
    ]);
    const env = validateEnvironment({
      AUTH_JWT_ISSUER: 'http://127.0.0.1:8080/realms/plants',
      AUTH_JWT_AUDIENCE: 'plant-store',
      AUTH_JWT_ALGORITHMS: 'ES256, EdDSA',
    });
    expect(env.AUTH_JWT_ISSUER).toBe('http://127.0.0.1:8080/realms/plants');
    expect(env.AUTH_JWT_ALGORITHMS).toEqual(['ES256', 'EdDSA']);
  });

  it('never repeats a secret value in its message', () => {
    expect(() => validateEnvironment({ BOOTSTRAP_TOKEN: 'secret!value' })).toThrow(
      /BOOTSTRAP_TOKEN/,
    );
    expect(() => validateEnvironment({ BOOTSTRAP_TOKEN: 'secret!value' })).not.toThrow(
      /secret!value/,
    );
    expect(problemLines({ DATABASE_URL: 'mysql://user:hunter2@db/plants' })).toEqual([
      'DATABASE_URL: the value is not in the allowed form; allowed: sqlite:<file path> or postgres://user:password@host:port/database (several host:port, comma-separated)',
    ]);
    expect(problemLines({ REDIS_URL: 'http://:hunter2@redis' })[0]).toMatch(
      /^REDIS_URL: the value is not in the allowed form/,
    );
  });

  it('takes a CURSOR_SECRET of 32 to 512 printable ASCII characters, and never shows a refused one', () => {
    const secret = 'k'.repeat(31);
    for (const value of [secret, `${secret} k`, `${secret}\u00e9`, 'k'.repeat(513)]) {
      const lines = problemLines({ CURSOR_SECRET: value });
      expect(lines).toEqual([
        expect.stringMatching(/^CURSOR_SECRET: the value is not in the allowed form/),
      ]);
      expect(lines[0]).not.toContain(secret);
    }
    expect(validateEnvironment({ CURSOR_SECRET: `${secret}+` }).CURSOR_SECRET).toBe(`${secret}+`);
    expect(validateEnvironment({ CURSOR_SECRET: '' }).CURSOR_SECRET).toBeUndefined();
  });

  it.each(ENVIRONMENT_PARTS.map((part) => [part.name, part] as const))(
    'reads every variable %s declares a rule for, optional ones included',
    (_name, Part) => {
      const ruled = new Set(
        getMetadataStorage()
          .getTargetValidationMetadatas(Part, '', true, false)
          .map((rule) => rule.propertyName),
      );
      expect(ruled.size).toBeGreaterThan(0);
      expect(Object.keys(new Part()).sort()).toEqual([...ruled].sort());
    },
  );

  it('has each variable in one part only', () => {
    const names = ENVIRONMENT_PARTS.flatMap((Part) => Object.keys(new Part()));
    expect(names.length).toBeGreaterThan(40);
    expect(new Set(names).size).toBe(names.length);
  });

  it('passes a value given for an optional variable through', () => {
    expect(validateEnvironment({ REDIS_URL: 'redis://127.0.0.1:6379' }).REDIS_URL).toBe(
      'redis://127.0.0.1:6379',
    );
  });
});
