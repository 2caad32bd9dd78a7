import { isIP } from 'node:net';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateIf,
  validateSync,
} from 'class-validator';

export const NODE_ENVS = ['development', 'test', 'production'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

/** Owners are short, printable names; they appear in logs and the token CLI. */
export const OWNER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** RFC 6750 b64token characters, so that any bootstrap token can be sent in a header. */
const TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]{32,512}=*$/;

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

const IsTrustProxy = () =>
  ValidateBy({
    name: 'isTrustProxy',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'boolean' ||
        (Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 100) ||
        (Array.isArray(value) &&
          value.length > 0 &&
          value.every((item) => typeof item === 'string' && isAddressOrCidr(item))),
      defaultMessage: () =>
        'TRUST_PROXY must be true, false, a hop count, or a comma-separated list of proxy addresses or CIDRs such as 10.0.0.0/8,127.0.0.1',
    },
  });

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

const IsIdentityProviderUrl = (name: string) =>
  ValidateBy({
    name: 'isIdentityProviderUrl',
    validator: {
      validate: isIdentityProviderUrl,
      defaultMessage: () => `${name} must be an https:// URL (http:// only on a loopback address)`,
    },
  });

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/**
 * Every environment variable the service reads, with its default. This class
 * is the only place that knows about process.env (through @nestjs/config);
 * the rest of the code asks ConfigService<Environment, true>.
 */
export class Environment {
  @IsIn(NODE_ENVS)
  NODE_ENV: NodeEnv = 'development';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  @Matches(/^[^\s]+$/, { message: 'HOST must be a host name or address' })
  HOST = '127.0.0.1';

  /** `sqlite:<path>` (or `sqlite::memory:`) or `postgres://user@host:port/db`. */
  @Matches(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, {
    message:
      'DATABASE_URL must be sqlite:<file path> or postgres://user:password@host:port/database',
  })
  DATABASE_URL = 'sqlite:./data/plant-store.sqlite';

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  DB_POOL_SIZE = 10;

  /** How long a request waits for a database connection before it is a 503. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600_000)
  DB_CONNECT_TIMEOUT_MS = 5000;

  /** PostgreSQL statement_timeout; SQLite's busy timeout. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600_000)
  DB_STATEMENT_TIMEOUT_MS = 10_000;

  /** Largest request body accepted; larger ones are a 413. */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  @Max(100 * 1024 * 1024)
  BODY_LIMIT_BYTES = 1024 * 1024;

  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(TOKEN_PATTERN, {
    message:
      'BOOTSTRAP_TOKEN must be 32 to 512 characters of A-Z a-z 0-9 . _ ~ + / - (generate one with: npm run token -- generate)',
  })
  BOOTSTRAP_TOKEN?: string;

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevelName = 'info';

  /** Serve Prometheus metrics at /metrics. */
  @Transform(toBoolean)
  @IsBoolean()
  METRICS_ENABLED = true;

  /** How long in-flight requests may take to finish after SIGTERM/SIGINT. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(600_000)
  SHUTDOWN_TIMEOUT_MS = 10_000;

  /** Origins allowed by CORS, comma-separated; empty: CORS off. */
  @Transform(toList)
  @IsArray()
  @Matches(/^https?:\/\/[^\s,/]+$/, {
    each: true,
    message:
      'CORS_ORIGINS must be a comma-separated list of origins such as https://app.example.com',
  })
  CORS_ORIGINS: string[] = [];

  /** Time allowed to receive a whole request (headers and body). */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(600_000)
  HTTP_REQUEST_TIMEOUT_MS = 30_000;

  /** A connection with no traffic for this long is closed. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  HTTP_IDLE_TIMEOUT_MS = 60_000;

  /** How long an idle keep-alive connection is kept open. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 5_000;

  @Transform(toBoolean)
  @IsBoolean()
  RATE_LIMIT_ENABLED = true;

  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  RATE_LIMIT_WINDOW_MS = 60_000;

  /** Requests per window for one token owner (or one client IP without a valid token). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10_000_000)
  RATE_LIMIT_MAX = 1200;

  /** Failed authentications per window from one client IP before it gets 429s. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  AUTH_FAILURE_LIMIT = 20;

  /**
   * Which reverse proxies are believed about the client's address
   * (X-Forwarded-For): the address the failure budget and the per-address
   * quota count. Off by default: then every client behind a proxy has the
   * proxy's address.
   */
  @Transform(toTrustProxy)
  @IsTrustProxy()
  TRUST_PROXY: TrustProxy = false;

  /** Redis for rate-limit counters shared by several instances; without it, counters are in memory. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^rediss?:\/\/.+/, { message: 'REDIS_URL must be redis://host:port[/db] or rediss://…' })
  REDIS_URL?: string;

  /** An OpenID Connect issuer: when set, bearer credentials that are JWTs are its access tokens. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIdentityProviderUrl('AUTH_JWT_ISSUER')
  AUTH_JWT_ISSUER?: string;

  /** The audience an access token must name in `aud`; required with AUTH_JWT_ISSUER. */
  @Transform(emptyToUndefined)
  @ValidateIf(
    (env: Environment) => env.AUTH_JWT_ISSUER !== undefined || env.AUTH_JWT_AUDIENCE !== undefined,
  )
  @IsString({ message: 'AUTH_JWT_AUDIENCE is required with AUTH_JWT_ISSUER' })
  AUTH_JWT_AUDIENCE?: string;

  /** The issuer's JWKS; without it, the jwks_uri of its /.well-known/openid-configuration. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsIdentityProviderUrl('AUTH_JWT_JWKS_URI')
  AUTH_JWT_JWKS_URI?: string;

  /** The claim that names the owner (namespaced: see docs/DECISIONS.md). */
  @Matches(/^[A-Za-z0-9_:.-]{1,64}$/, { message: 'AUTH_JWT_OWNER_CLAIM must be a claim name' })
  AUTH_JWT_OWNER_CLAIM = 'sub';

  @Transform(toList)
  @IsArray()
  @IsIn(JWT_ALGORITHMS, {
    each: true,
    message: `AUTH_JWT_ALGORITHMS must be a comma-separated list of ${JWT_ALGORITHMS.join(', ')}`,
  })
  AUTH_JWT_ALGORITHMS: string[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];

  /** Seconds of clock skew allowed on exp and nbf. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(300)
  AUTH_JWT_CLOCK_TOLERANCE_S = 30;

  /** Listing needs the scope plants:read, create and delete plants:write (JWT callers only). */
  @Transform(toBoolean)
  @IsBoolean()
  AUTH_JWT_REQUIRE_SCOPES = false;

  /**
   * Least time between two fetches of the issuer's keys (an unknown key id
   * asks for one; a failed one is retried no sooner either).
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  AUTH_JWT_JWKS_COOLDOWN_MS = 10_000;

  /** How long /health/ready waits for the database. */
  @Transform(toInt)
  @IsInt()
  @Min(50)
  @Max(60_000)
  HEALTH_DB_TIMEOUT_MS = 1000;

  @Matches(OWNER_PATTERN, {
    message:
      'BOOTSTRAP_OWNER must be 1 to 64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit',
  })
  BOOTSTRAP_OWNER = 'demo';
}

/**
 * Validates the raw environment; used as @nestjs/config's `validate` hook and
 * by the command-line tools. Throws one error that names every bad variable.
 */
export function validateEnvironment(raw: Record<string, unknown>): Environment {
  const known = Object.keys(new Environment());
  const relevant: Record<string, unknown> = {};
  const optional = [
    'BOOTSTRAP_TOKEN',
    'REDIS_URL',
    'AUTH_JWT_ISSUER',
    'AUTH_JWT_AUDIENCE',
    'AUTH_JWT_JWKS_URI',
  ];
  for (const key of [...known, ...optional]) {
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
