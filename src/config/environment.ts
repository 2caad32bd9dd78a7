import {
  BooleanVariable,
  IdentityProviderUrlVariable,
  IntVariable,
  JWT_ALGORITHMS,
  ListVariable,
  OneOfVariable,
  OptionalVariable,
  PatternVariable,
  RequiredWithVariable,
  type TrustProxy,
  TrustProxyVariable,
} from './environment.decorators.js';
import { Variable } from './variable-metadata.js';

const NODE_ENVS = ['development', 'test', 'production'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

/** Owners are short, printable names; they appear in logs and the token CLI. */
export const OWNER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** RFC 6750 b64token characters, so that any bootstrap token can be sent in a header. */
const TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]{32,512}=*$/;

/** A key as text: at least 32 bytes of printable ASCII (`openssl rand -base64 48` gives 64). */
const CURSOR_SECRET_PATTERN = /^[\x21-\x7e]{32,512}$/;

/** One duration (units ms, s, m, h, d), and a comma-separated list of them. */
const DURATION_PATTERN = /^\s*\d{1,9}(ms|s|m|h|d)\s*$/;
const DURATIONS_PATTERN = /^\s*\d{1,9}(ms|s|m|h|d)(\s*,\s*\d{1,9}(ms|s|m|h|d))*\s*$/;

const APP_ROLES = ['all', 'api', 'worker'] as const;
export type AppRole = (typeof APP_ROLES)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/**
 * Every environment variable the service reads: its group and meaning
 * (@Variable), its rule (a decorator of environment.decorators.ts, which also
 * gives its type), and its default (the initialiser). load-environment.ts
 * reads process.env once and validates it into this class; inside the app it
 * is read through ConfigService<Environment, true> (see config.module.ts).
 * docs/CONFIGURATION.md is generated from this class: after adding or
 * changing a variable, run `npm run config:docs` (and list it in .env.example).
 *
 * Every property has an initialiser, `= undefined` for the optional ones
 * without a default: validation picks the variables to read from the
 * properties of `new Environment()`, so a variable declared without one would
 * be silently ignored (environment.spec.ts checks this).
 */
export class Environment {
  @Variable(
    'Process',
    'The kind of deployment. In development logs are pretty-printed; outside production a first ' +
      'token is issued and logged when none exists.',
  )
  @OneOfVariable(NODE_ENVS)
  NODE_ENV: NodeEnv = 'development';

  @Variable(
    'Process',
    'What the instance does: `api` serves the API and sends no webhooks, `worker` sends ' +
      'webhooks (serving only health and metrics), `all` does both.',
  )
  @OneOfVariable(APP_ROLES)
  APP_ROLE: AppRole = 'all';

  @Variable(
    'Process',
    'Least severe level logged (JSON lines on stdout, pretty-printed in development).',
  )
  @OneOfVariable(LOG_LEVELS)
  LOG_LEVEL: LogLevelName = 'info';

  @Variable(
    'Process',
    'After SIGTERM, how long the instance keeps serving (readiness already failing, every ' +
      'answer with Connection: close) before it stops accepting, so that a load balancer takes ' +
      'it out first. SIGINT skips it.',
  )
  @IntVariable(0, 600_000)
  SHUTDOWN_DRAIN_MS = 5000;

  @Variable(
    'Process',
    'How long requests in flight may take to finish once the instance stops accepting.',
  )
  @IntVariable(0, 600_000)
  SHUTDOWN_TIMEOUT_MS = 10_000;

  @Variable('HTTP server', 'TCP port to listen on; 0 picks a free one.')
  @IntVariable(0, 65535)
  PORT = 3000;

  @Variable('HTTP server', 'Address to listen on; `0.0.0.0` or `::` for every interface.')
  @PatternVariable('string', /^[^\s]+$/, 'a host name or address, without spaces')
  HOST = '127.0.0.1';

  @Variable('HTTP server', 'Largest request body accepted, in bytes; a larger one is a 413.')
  @IntVariable(1024, 100 * 1024 * 1024)
  BODY_LIMIT_BYTES = 64 * 1024;

  @Variable('HTTP server', 'Origins allowed by CORS; empty: CORS off.')
  @ListVariable('a comma-separated list of origins such as https://app.example.com', (origin) =>
    /^https?:\/\/[^\s,/]+$/.test(origin),
  )
  CORS_ORIGINS: string[] = [];

  @Variable('HTTP server', 'Time allowed to receive a whole request (headers and body).')
  @IntVariable(100, 600_000)
  HTTP_REQUEST_TIMEOUT_MS = 30_000;

  @Variable('HTTP server', 'A connection with no traffic for this long is closed.')
  @IntVariable(100, 3_600_000)
  HTTP_IDLE_TIMEOUT_MS = 60_000;

  @Variable('HTTP server', 'How long an idle keep-alive connection is kept open.')
  @IntVariable(100, 3_600_000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 5_000;

  @Variable(
    'HTTP server',
    'Which reverse proxies are believed about the client address (X-Forwarded-For), the ' +
      'address the failed-authentication budget and the per-address quota count. Off by ' +
      "default: then every client behind a proxy has the proxy's address.",
  )
  @TrustProxyVariable()
  TRUST_PROXY: TrustProxy = false;

  @Variable(
    'HTTP server',
    'The key of the paging cursors in next links (an HMAC key, derived from this text): every ' +
      'instance behind one address needs the same, and a change makes cursors already given out ' +
      '400s. Required in production when APP_ROLE is all or api; unset elsewhere, each process ' +
      'uses a random key and says so in a warning. Generate one with `openssl rand -base64 48`.',
    { secret: true },
  )
  @OptionalVariable()
  @PatternVariable(
    'string',
    CURSOR_SECRET_PATTERN,
    '32 to 512 printable ASCII characters without spaces (at least 32 bytes)',
  )
  CURSOR_SECRET?: string = undefined;

  @Variable(
    'Database',
    'The database: `sqlite:<file>` (or `sqlite::memory:`), no server needed, or PostgreSQL, ' +
      "also in libpq's multi-host form `postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write` " +
      '(the service connects only to the host that takes writes; docs/FAILOVER.md).',
    { secret: true },
  )
  @PatternVariable(
    'URL',
    /^(sqlite:.+|postgres(ql)?:\/\/.+)$/,
    'sqlite:<file path> or postgres://user:password@host:port/database (several host:port, comma-separated)',
  )
  DATABASE_URL = 'sqlite:./data/plant-store.sqlite';

  @Variable('Database', 'PostgreSQL connections per instance.')
  @IntVariable(1, 1000)
  DB_POOL_SIZE = 10;

  @Variable('Database', 'How long a request waits for a database connection before it is a 503.')
  @IntVariable(100, 600_000)
  DB_CONNECT_TIMEOUT_MS = 5000;

  @Variable(
    'Database',
    'How long one query may take: on PostgreSQL the client gives up (a server-side ' +
      'statement_timeout belongs to the role: `ALTER ROLE … SET statement_timeout`); on SQLite, ' +
      "how long a writer waits for another's lock.",
  )
  @IntVariable(100, 600_000)
  DB_STATEMENT_TIMEOUT_MS = 10_000;

  @Variable(
    'Database',
    "A request's whole database work on PostgreSQL (the token lookup, waiting for a connection, " +
      'every statement, a retry) ends by then, a 503 after it. Each statement gets what is left, ' +
      'at most DB_STATEMENT_TIMEOUT_MS; a connection is waited for at most DB_CONNECT_TIMEOUT_MS.',
  )
  @IntVariable(100, 600_000)
  DB_REQUEST_DEADLINE_MS = 10_000;

  @Variable(
    'Database',
    'Run pending migrations at start-up. With false the instance never migrates and refuses ' +
      'to start while a migration is pending: the migrations run as a job ' +
      '(`node dist/migrate.main.js`).',
  )
  @BooleanVariable()
  DB_MIGRATE_ON_START = true;

  @Variable(
    'Tokens',
    'A token that exists at start-up, for BOOTSTRAP_OWNER. Generate one with ' +
      '`npm run -s token -- generate`.',
    { secret: true },
  )
  @OptionalVariable()
  @PatternVariable(
    'token',
    TOKEN_PATTERN,
    '32 to 512 characters of A-Z a-z 0-9 . _ ~ + / -, optionally followed by =',
  )
  BOOTSTRAP_TOKEN?: string = undefined;

  @Variable('Tokens', 'The owner of BOOTSTRAP_TOKEN and of the first token issued in development.')
  @PatternVariable(
    'string',
    OWNER_PATTERN,
    '1 to 64 characters of A-Z a-z 0-9 . _ - starting with a letter or digit',
  )
  BOOTSTRAP_OWNER = 'demo';

  @Variable(
    'OpenID Connect',
    'An OpenID Connect issuer: when set, bearer credentials that are JWTs are its access ' +
      'tokens, beside opaque tokens.',
  )
  @OptionalVariable()
  @IdentityProviderUrlVariable()
  AUTH_JWT_ISSUER?: string = undefined;

  @Variable('OpenID Connect', 'The audience an access token must name in `aud`.')
  @RequiredWithVariable('AUTH_JWT_ISSUER')
  AUTH_JWT_AUDIENCE?: string = undefined;

  @Variable(
    'OpenID Connect',
    "The issuer's key set; unset: the `jwks_uri` of its `/.well-known/openid-configuration`.",
  )
  @OptionalVariable()
  @IdentityProviderUrlVariable()
  AUTH_JWT_JWKS_URI?: string = undefined;

  @Variable(
    'OpenID Connect',
    'The claim that names the owner; owners are namespaced (`jwt:<issuer tag>:<claim>`) so that ' +
      'they never merge with token owners (docs/DECISIONS.md).',
  )
  @PatternVariable(
    'string',
    /^[A-Za-z0-9_:.-]{1,64}$/,
    'a claim name: 1 to 64 characters of A-Z a-z 0-9 _ : . -',
  )
  AUTH_JWT_OWNER_CLAIM = 'sub';

  @Variable('OpenID Connect', 'Algorithms an access token may be signed with.')
  @ListVariable(`a comma-separated list of ${JWT_ALGORITHMS.join(', ')}`, (algorithm) =>
    (JWT_ALGORITHMS as readonly string[]).includes(algorithm),
  )
  AUTH_JWT_ALGORITHMS: string[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];

  @Variable('OpenID Connect', 'Seconds of clock skew allowed on `exp` and `nbf`.')
  @IntVariable(0, 300)
  AUTH_JWT_CLOCK_TOLERANCE_S = 30;

  @Variable(
    'OpenID Connect',
    'When true, a JWT caller needs its scopes: `plants:read` to list and get plants, ' +
      '`plants:write` to create and delete them, `webhooks:manage` for /webhooks ' +
      "(an opaque token's own scopes are checked whatever this says).",
  )
  @BooleanVariable()
  AUTH_JWT_REQUIRE_SCOPES = false;

  @Variable(
    'OpenID Connect',
    "Least time between two fetches of the issuer's keys (an unknown key id asks for one; a " +
      'failed one is retried no sooner either).',
  )
  @IntVariable(0, 3_600_000)
  AUTH_JWT_JWKS_COOLDOWN_MS = 10_000;

  @Variable(
    'OpenID Connect',
    "How often the issuer's keys are fetched again (not within the cooldown of another fetch): " +
      'a key the issuer drops stops verifying, cached tokens included.',
  )
  @IntVariable(1000, 86_400_000)
  AUTH_JWT_JWKS_REFRESH_MS = 600_000;

  @Variable(
    'Rate limits',
    'Apply the per-owner request quota, the failed-authentication budget and the pace of refusals.',
  )
  @BooleanVariable()
  RATE_LIMIT_ENABLED = true;

  @Variable('Rate limits', 'The window the quota and the budget count over.')
  @IntVariable(1000, 3_600_000)
  RATE_LIMIT_WINDOW_MS = 60_000;

  @Variable(
    'Rate limits',
    'Requests per window for one token owner (or one client address without a valid token).',
  )
  @IntVariable(1, 10_000_000)
  RATE_LIMIT_MAX = 1200;

  @Variable(
    'Rate limits',
    'Failed authentications per window from one client address before it gets 429s.',
  )
  @IntVariable(1, 1_000_000)
  AUTH_FAILURE_LIMIT = 20;

  @Variable(
    'Rate limits',
    'Refusals (401, 429) per second to one client address answered at once; past it, ' +
      'each comes AUTH_REFUSAL_DELAY_MS late. Authenticated requests are never slowed.',
  )
  @IntVariable(1, 1_000_000)
  AUTH_REFUSAL_RATE = 20;

  @Variable(
    'Rate limits',
    'How late a refusal past AUTH_REFUSAL_RATE is answered (at most 10 s: a held request ' +
      'keeps its connection).',
  )
  @IntVariable(1, 10_000)
  AUTH_REFUSAL_DELAY_MS = 1000;

  @Variable(
    'Rate limits',
    "Share the service between owners: each owner's requests in flight bounded " +
      '(FAIR_SHARE_MAX_IN_FLIGHT), and on PostgreSQL, while owners wait for a pooled ' +
      'connection, each freed one goes to the owner holding the fewest.',
  )
  @BooleanVariable()
  FAIR_SHARE_ENABLED = true;

  @Variable(
    'Rate limits',
    "One owner's requests in flight in an instance; the next is a 429 with Retry-After " +
      'until one of them ends (a streamed list counts until its last byte is written).',
  )
  @IntVariable(1, 1_000_000)
  FAIR_SHARE_MAX_IN_FLIGHT = 64;

  @Variable(
    'Rate limits',
    'Redis for the counters, shared by every instance; unset: each instance counts in memory.',
    { secret: true },
  )
  @OptionalVariable()
  @PatternVariable('URL', /^rediss?:\/\/.+/, 'redis://host:port[/db] or rediss://…')
  REDIS_URL?: string = undefined;

  @Variable('Health and metrics', 'Serve Prometheus metrics at /metrics.')
  @BooleanVariable()
  METRICS_ENABLED = true;

  @Variable('Health and metrics', 'How long /health/ready waits for the database.')
  @IntVariable(50, 60_000)
  HEALTH_DB_TIMEOUT_MS = 1000;

  @Variable(
    'Webhooks',
    'Waits between delivery attempts of a webhook; after the last one it is marked failed.',
  )
  @PatternVariable(
    'durations',
    DURATIONS_PATTERN,
    'comma-separated durations such as 5s,30s,2m,10m,1h,6h,24h (units ms, s, m, h, d)',
  )
  WEBHOOK_RETRY_SCHEDULE = '5s,30s,2m,10m,1h,6h,24h';

  @Variable(
    'Webhooks',
    'How long a receiver has to answer a delivery (connection, headers and body).',
  )
  @IntVariable(100, 120_000)
  WEBHOOK_TIMEOUT_MS = 10_000;

  @Variable(
    'Webhooks',
    'Allow http:// webhook URLs (local development, tests; logged as a warning at start-up); ' +
      'otherwise https only.',
  )
  @BooleanVariable()
  WEBHOOK_ALLOW_HTTP = false;

  @Variable(
    'Webhooks',
    'Allow webhook receivers on loopback, private, link-local and other non-public addresses ' +
      '(logged as a warning at start-up).',
  )
  @BooleanVariable()
  WEBHOOK_ALLOW_PRIVATE_TARGETS = false;

  @Variable(
    'Webhooks',
    'How often each instance looks for due deliveries (a local create wakes it at once).',
  )
  @IntVariable(10, 60_000)
  WEBHOOK_POLL_INTERVAL_MS = 1000;

  @Variable('Webhooks', 'Deliveries one instance sends at the same time.')
  @IntVariable(1, 256)
  WEBHOOK_CONCURRENCY = 16;

  @Variable(
    'Webhooks',
    "Deliveries one instance sends to one subscription at the same time; an owner's " +
      'subscriptions together hold at most half of WEBHOOK_CONCURRENCY (at least 1), so that ' +
      'receivers that hang hold up no one else.',
  )
  @IntVariable(1, 256)
  WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION = 4;

  @Variable(
    'Webhooks',
    'How long a claimed delivery stays with the instance that claimed it; past that, another ' +
      'instance may take it (the first one is presumed dead). Never shorter than ' +
      'WEBHOOK_TIMEOUT_MS plus a second.',
  )
  @IntVariable(1000, 3_600_000)
  WEBHOOK_LEASE_MS = 60_000;

  @Variable(
    'Webhooks',
    'Webhook subscriptions one owner may have (the next create is a 409): bounds ' +
      'GET /webhooks and the rows each plant create writes to the outbox.',
  )
  @IntVariable(1, 1000)
  WEBHOOK_MAX_SUBSCRIPTIONS = 20;

  @Variable(
    'Webhooks',
    'After a secret rotation, how long deliveries are signed with the old secret too.',
  )
  @PatternVariable('duration', DURATION_PATTERN, 'a duration such as 24h (units ms, s, m, h, d)')
  WEBHOOK_SECRET_OVERLAP = '24h';

  @Variable(
    'Webhooks',
    'How long a delivered or failed delivery is kept before the dispatcher deletes it.',
  )
  @PatternVariable('duration', DURATION_PATTERN, 'a duration such as 30d (units ms, s, m, h, d)')
  WEBHOOK_RETENTION = '30d';
}
