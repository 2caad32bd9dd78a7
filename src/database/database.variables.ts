import { BooleanVariable, IntVariable, PatternVariable } from '../config/environment.decorators.js';
import { Variable } from '../config/variable-metadata.js';

/**
 * The database's variables: which database, its pool, its timeouts and its migrations. One part of
 * the service's Environment (src/environment.ts).
 */
export class DatabaseVariables {
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

  @Variable(
    'Database',
    'PostgreSQL connections per instance: each made when first needed, then kept open.',
  )
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
      'every statement, a retry) ends by then, a 503 after it (its timers are rounded up, at most ' +
      '3 % later, so that requests in flight share them). Each statement gets what is left, at ' +
      'most DB_STATEMENT_TIMEOUT_MS; a connection is waited for at most DB_CONNECT_TIMEOUT_MS.',
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
}
