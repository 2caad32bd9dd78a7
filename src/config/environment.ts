import { Transform } from 'class-transformer';
import { IsArray, IsIn, IsString, Matches, ValidateIf } from 'class-validator';
import {
  BooleanVariable,
  emptyToUndefined,
  IntVariable,
  IdentityProviderUrlVariable,
  JWT_ALGORITHMS,
  OptionalVariable,
  toList,
  type TrustProxy,
  TrustProxyVariable,
} from './environment.decorators.js';

const NODE_ENVS = ['development', 'test', 'production'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

/** Owners are short, printable names; they appear in logs and the token CLI. */
export const OWNER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** RFC 6750 b64token characters, so that any bootstrap token can be sent in a header. */
const TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]{32,512}=*$/;

/** Durations such as 5s,30s,2m,10m,1h,6h,24h (units ms, s, m, h, d). */
/** One duration of the retry schedule's syntax. */
const DURATION_PATTERN = /^\s*\d{1,9}(ms|s|m|h|d)\s*$/;
const RETRY_SCHEDULE_PATTERN = /^\s*\d{1,9}(ms|s|m|h|d)(\s*,\s*\d{1,9}(ms|s|m|h|d))*\s*$/;

/** What an instance does: `api` serves HTTP, `worker` sends webhooks, `all` both. */
const APP_ROLES = ['all', 'api', 'worker'] as const;
export type AppRole = (typeof APP_ROLES)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/**
 * Every environment variable the service reads, with its default, and the
 * rules a value must follow. load-environment.ts reads process.env once and
 * validates it into this class; inside the app it is read through
 * ConfigService<Environment, true> (see config.module.ts).
 *
 * Every property has an initialiser, `= undefined` for the optional ones
 * without a default: validation picks the variables to read from the
 * properties of `new Environment()`, so a variable declared without one would
 * be silently ignored (environment.spec.ts checks this).
 */
export class Environment {
  @IsIn(NODE_ENVS)
  NODE_ENV: NodeEnv = 'development';

  @IntVariable(0, 65535)
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

  @IntVariable(1, 1000)
  DB_POOL_SIZE = 10;

  /** How long a request waits for a database connection before it is a 503. */
  @IntVariable(100, 600_000)
  DB_CONNECT_TIMEOUT_MS = 5000;

  /**
   * How long one query may take: on PostgreSQL the client gives up (pg's
   * query_timeout; a server-side statement_timeout is set on the role, see the
   * README); on SQLite, how long a writer waits for another's lock.
   */
  @IntVariable(100, 600_000)
  DB_STATEMENT_TIMEOUT_MS = 10_000;

  /** Largest request body accepted; larger ones are a 413. */
  @IntVariable(1024, 100 * 1024 * 1024)
  BODY_LIMIT_BYTES = 64 * 1024;

  @OptionalVariable()
  @Matches(TOKEN_PATTERN, {
    message:
      'BOOTSTRAP_TOKEN must be 32 to 512 characters of A-Z a-z 0-9 . _ ~ + / - (generate one with: npm run token -- generate)',
  })
  BOOTSTRAP_TOKEN?: string = undefined;

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevelName = 'info';

  /** Serve Prometheus metrics at /metrics. */
  @BooleanVariable()
  METRICS_ENABLED = true;

  /**
   * After SIGTERM: how long the instance keeps serving (readiness already
   * failing, every answer with Connection: close) before it stops accepting,
   * so that a load balancer takes it out first. SIGINT skips it.
   */
  @IntVariable(0, 600_000)
  SHUTDOWN_DRAIN_MS = 5000;

  /** How long in-flight requests may take to finish once the instance stops accepting. */
  @IntVariable(0, 600_000)
  SHUTDOWN_TIMEOUT_MS = 10_000;

  @IsIn(APP_ROLES)
  APP_ROLE: AppRole = 'all';

  /**
   * Run pending migrations at start-up. With false the instance never
   * migrates and refuses to start while a migration is pending (the
   * migrations run as a job: `node dist/migrate.main.js`).
   */
  @BooleanVariable()
  DB_MIGRATE_ON_START = true;

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
  @IntVariable(100, 600_000)
  HTTP_REQUEST_TIMEOUT_MS = 30_000;

  /** A connection with no traffic for this long is closed. */
  @IntVariable(100, 3_600_000)
  HTTP_IDLE_TIMEOUT_MS = 60_000;

  /** How long an idle keep-alive connection is kept open. */
  @IntVariable(100, 3_600_000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 5_000;

  @BooleanVariable()
  RATE_LIMIT_ENABLED = true;

  @IntVariable(1000, 3_600_000)
  RATE_LIMIT_WINDOW_MS = 60_000;

  /** Requests per window for one token owner (or one client IP without a valid token). */
  @IntVariable(1, 10_000_000)
  RATE_LIMIT_MAX = 1200;

  /** Failed authentications per window from one client IP before it gets 429s. */
  @IntVariable(1, 1_000_000)
  AUTH_FAILURE_LIMIT = 20;

  /**
   * Which reverse proxies are believed about the client's address
   * (X-Forwarded-For): the address the failure budget and the per-address
   * quota count. Off by default: then every client behind a proxy has the
   * proxy's address.
   */
  @TrustProxyVariable()
  TRUST_PROXY: TrustProxy = false;

  /** Redis for rate-limit counters shared by several instances; without it, counters are in memory. */
  @OptionalVariable()
  @Matches(/^rediss?:\/\/.+/, { message: 'REDIS_URL must be redis://host:port[/db] or rediss://…' })
  REDIS_URL?: string = undefined;

  /** An OpenID Connect issuer: when set, bearer credentials that are JWTs are its access tokens. */
  @OptionalVariable()
  @IdentityProviderUrlVariable('AUTH_JWT_ISSUER')
  AUTH_JWT_ISSUER?: string = undefined;

  /** The audience an access token must name in `aud`; required with AUTH_JWT_ISSUER. */
  @Transform(emptyToUndefined)
  @ValidateIf(
    (env: Environment) => env.AUTH_JWT_ISSUER !== undefined || env.AUTH_JWT_AUDIENCE !== undefined,
  )
  @IsString({ message: 'AUTH_JWT_AUDIENCE is required with AUTH_JWT_ISSUER' })
  AUTH_JWT_AUDIENCE?: string = undefined;

  /** The issuer's JWKS; without it, the jwks_uri of its /.well-known/openid-configuration. */
  @OptionalVariable()
  @IdentityProviderUrlVariable('AUTH_JWT_JWKS_URI')
  AUTH_JWT_JWKS_URI?: string = undefined;

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
  @IntVariable(0, 300)
  AUTH_JWT_CLOCK_TOLERANCE_S = 30;

  /** Listing needs the scope plants:read, create and delete plants:write (JWT callers only). */
  @BooleanVariable()
  AUTH_JWT_REQUIRE_SCOPES = false;

  /**
   * Least time between two fetches of the issuer's keys (an unknown key id
   * asks for one; a failed one is retried no sooner either).
   */
  @IntVariable(0, 3_600_000)
  AUTH_JWT_JWKS_COOLDOWN_MS = 10_000;

  /**
   * How often the issuer's keys are fetched again (within the cooldown of
   * another fetch, not): a key the issuer drops stops verifying, cached tokens included.
   */
  @IntVariable(1000, 86_400_000)
  AUTH_JWT_JWKS_REFRESH_MS = 600_000;

  /** How long /health/ready waits for the database. */
  @IntVariable(50, 60_000)
  HEALTH_DB_TIMEOUT_MS = 1000;

  @Matches(OWNER_PATTERN, {
    message:
      'BOOTSTRAP_OWNER must be 1 to 64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit',
  })
  BOOTSTRAP_OWNER = 'demo';

  /** Waits between delivery attempts of a webhook; after the last one it is marked failed. */
  @Matches(RETRY_SCHEDULE_PATTERN, {
    message:
      'WEBHOOK_RETRY_SCHEDULE must be comma-separated durations such as 5s,30s,2m,10m,1h,6h,24h (units ms, s, m, h, d)',
  })
  WEBHOOK_RETRY_SCHEDULE = '5s,30s,2m,10m,1h,6h,24h';

  /** How long a receiver has to answer a delivery (connection, headers and body). */
  @IntVariable(100, 120_000)
  WEBHOOK_TIMEOUT_MS = 10_000;

  /** Allow http:// webhook URLs (local development, tests); otherwise https only. */
  @BooleanVariable()
  WEBHOOK_ALLOW_HTTP = false;

  /** Allow webhook receivers on loopback, private, link-local and other non-public addresses. */
  @BooleanVariable()
  WEBHOOK_ALLOW_PRIVATE_TARGETS = false;

  /** How often each instance looks for due deliveries (a local create wakes it at once). */
  @IntVariable(10, 60_000)
  WEBHOOK_POLL_INTERVAL_MS = 1000;

  /** Deliveries one instance sends at the same time. */
  @IntVariable(1, 256)
  WEBHOOK_CONCURRENCY = 16;

  /**
   * Deliveries one instance sends to one subscription at the same time; an
   * owner's subscriptions together hold at most half of WEBHOOK_CONCURRENCY
   * (at least 1), so that receivers that hang hold up no one else.
   */
  @IntVariable(1, 256)
  WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION = 4;

  /**
   * How long a claimed delivery stays with the instance that claimed it; past
   * that, another instance may take it (the first one is presumed dead).
   * Never shorter than WEBHOOK_TIMEOUT_MS plus a second.
   */
  @IntVariable(1000, 3_600_000)
  WEBHOOK_LEASE_MS = 60_000;

  /**
   * Webhook subscriptions one owner may have: bounds GET /webhooks and the
   * rows each plant create writes to the outbox.
   */
  @IntVariable(1, 1000)
  WEBHOOK_MAX_SUBSCRIPTIONS = 20;

  /** After a secret rotation, how long deliveries are signed with the old secret too. */
  @Matches(DURATION_PATTERN, {
    message: 'WEBHOOK_SECRET_OVERLAP must be a duration such as 24h (units ms, s, m, h, d)',
  })
  WEBHOOK_SECRET_OVERLAP = '24h';

  /** How long a delivered or failed delivery is kept before the dispatcher deletes it. */
  @Matches(DURATION_PATTERN, {
    message: 'WEBHOOK_RETENTION must be a duration such as 30d (units ms, s, m, h, d)',
  })
  WEBHOOK_RETENTION = '30d';
}
