import { MalformedDatabaseUrlError } from './postgres-url.js';
import { QueryFailedError, QueryRunnerAlreadyReleasedError } from 'typeorm';

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code } = error as { code?: unknown };
  return typeof code === 'string' ? code : undefined;
}

function driverErrorOf(error: unknown): unknown {
  return error instanceof QueryFailedError ? error.driverError : error;
}

/** A primary-key or unique violation, on PostgreSQL or SQLite. */
export function isUniqueViolation(error: unknown): boolean {
  const code = codeOf(driverErrorOf(error));
  return (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE'
  );
}

/** A primary-key or unique violation on PostgreSQL's `table` (its error names the table). */
export function isPostgresUniqueViolationOn(error: unknown, table: string): boolean {
  const driverError = driverErrorOf(error);
  return codeOf(driverError) === '23505' && (driverError as { table?: unknown }).table === table;
}

/**
 * No connection could be had: none was made, or the one made was not fit to
 * use (a standby, a connection from before a failover). Nothing was sent, so
 * whatever the request meant to do, it did not happen.
 */
export class NoConnectionError extends Error {
  readonly code = 'PLANT_STORE_NO_CONNECTION';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NoConnectionError';
  }
}

/** The request's time for database work ran out before a statement was sent. */
export class DeadlineExceededError extends Error {
  readonly code = 'PLANT_STORE_DEADLINE';
  constructor() {
    super("the request's deadline for database work has passed");
    this.name = 'DeadlineExceededError';
  }
}

/**
 * A statement was sent and not answered by the request's deadline (its read
 * timeout was what the deadline left): a 503 as DeadlineExceededError, but
 * the statement may have run.
 */
export class DeadlineInStatementError extends Error {
  readonly code = 'PLANT_STORE_DEADLINE_IN_STATEMENT';
  constructor(options?: ErrorOptions) {
    super("the request's deadline for database work passed during a statement", options);
    this.name = 'DeadlineInStatementError';
  }
}

/**
 * Whether the request's deadline stopped the work, before a statement or
 * during one: no time is left for another attempt. (A timer set for what
 * the deadline leaves can fire a little before the clock reaches it.)
 */
export function deadlinePassed(error: unknown): boolean {
  const cause = driverErrorOf(error);
  return cause instanceof DeadlineExceededError || cause instanceof DeadlineInStatementError;
}

/**
 * SQLSTATEs that say the server did not run the statement and will not on
 * this connection: it is read-only (a standby, a demoted primary), shutting
 * down or starting up, or the connection is broken (class 08).
 */
const NOT_RUN_SQLSTATES = new Set([
  '25006', // read_only_sql_transaction
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);

/** The SQLSTATEs of a failover: the server this connection reaches is no longer (or not yet) the primary. */
const FAILOVER_SQLSTATES = new Set(['25006', '57P01', '57P02', '57P03']);

const UNAVAILABLE_CODES = new Set([
  ...NOT_RUN_SQLSTATES,
  '57014', // query_canceled (a server-side statement_timeout)
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  new NoConnectionError('').code,
  new DeadlineExceededError().code,
  new DeadlineInStatementError().code,
]);

/** node-postgres's words for a statement whose query_timeout passed. */
export const READ_TIMEOUT_MESSAGE = 'Query read timeout';

/** node-postgres and pg-pool say these in words only (no code). */
const CONNECTION_LOST_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  READ_TIMEOUT_MESSAGE,
  'Client has encountered a connection error',
  'Client was closed and is not queryable',
  'Connection is not established',
];

/**
 * node-postgres's DatabaseError: an ErrorResponse the server (or PgBouncer)
 * sent, with its SQLSTATE and severity; a socket's errors have neither.
 */
function isServerAnswer(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { severity } = error as { severity?: unknown };
  return typeof severity === 'string' && /^[0-9A-Z]{5}$/.test(codeOf(error) ?? '');
}

function isConnectionLost(error: unknown): boolean {
  if (error instanceof QueryRunnerAlreadyReleasedError) return true;
  const message = error instanceof Error ? error.message : '';
  return CONNECTION_LOST_MESSAGES.some((text) => message.includes(text));
}

/**
 * The database cannot answer right now (down, unreachable, failing over,
 * overloaded, locked, the request's deadline spent): the request may succeed
 * when retried, so it is a 503 with Retry-After. A connection that ends
 * half-way surfaces in TypeORM as QueryRunnerAlreadyReleasedError when the
 * next statement finds its query runner released: the same case.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const cause = driverErrorOf(error);
  const code = codeOf(cause);
  if (code !== undefined && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  if (code !== undefined && permanentFailure(cause) !== undefined) return true;
  return isConnectionLost(cause);
}

/**
 * Whether the failed attempt certainly changed nothing, so that even a
 * statement that is not safe to repeat (a delete) may be tried again: no
 * connection was had, the deadline stopped it before it was sent, or the
 * server itself answered that it did not run it (read-only, shutting down,
 * class 08). A connection lost while a statement was on its way proves
 * nothing: it may have committed.
 */
export function nothingRan(error: unknown): boolean {
  const cause = driverErrorOf(error);
  if (cause instanceof NoConnectionError || cause instanceof DeadlineExceededError) return true;
  const code = codeOf(cause);
  if (!isServerAnswer(cause) || code === undefined) return false;
  return NOT_RUN_SQLSTATES.has(code) || code.startsWith('08');
}

/**
 * Whether the connection that raised this error must never be used again:
 * its socket failed, a read timed out with the statement still running, or
 * the server it reaches is no longer (or not yet) a writable primary. A
 * server's answer to a bad statement (a constraint, a syntax error) leaves it
 * as good as before.
 */
export function poisonsConnection(error: unknown): boolean {
  const cause = driverErrorOf(error);
  if (!isServerAnswer(cause)) return true;
  const code = codeOf(cause)!;
  return FAILOVER_SQLSTATES.has(code) || code.startsWith('08');
}

/** Whether the error says the server behind this connection stopped being the primary. */
export function signalsFailover(error: unknown): boolean {
  const code = codeOf(driverErrorOf(error));
  return code !== undefined && FAILOVER_SQLSTATES.has(code);
}

/**
 * PgBouncer reports a database it does not know, a database its server does
 * not have, and a login it cannot make as 08P01 with words; PostgreSQL's own
 * codes would be 3D000 and 28P01. Other 08P01s (a server connection lost) pass.
 */
const PGBOUNCER_PERMANENT = [
  {
    pattern: /no such database|database "[^"]*" does not exist/i,
    cause: 'the database named in DATABASE_URL does not exist',
  },
  {
    pattern:
      /no such user|role "[^"]*" does not exist|password authentication failed|SASL authentication failed|login failed/i,
    cause: 'the database refused the login of DATABASE_URL',
  },
];

/**
 * A configuration the database will refuse however often it is asked (no
 * such database, a login refused, a URL that cannot be read): what is wrong,
 * in words an operator can act on, or undefined for anything else. Start-up
 * stops at once on one of these; after start-up it is a 503 like any outage.
 */
export function permanentFailure(error: unknown): string | undefined {
  const cause = driverErrorOf(error);
  const code = codeOf(cause);
  const detail = cause instanceof Error ? cause.message : String(cause);
  if (code === '3D000') return `the database named in DATABASE_URL does not exist: ${detail}`;
  if (code === '28P01' || code === '28000') {
    return `the database refused the login of DATABASE_URL: ${detail}`;
  }
  if (code === '08P01') {
    const known = PGBOUNCER_PERMANENT.find(({ pattern }) => pattern.test(detail));
    if (known) return `${known.cause}: ${detail}`;
  }
  if (cause instanceof MalformedDatabaseUrlError) return cause.message;
  return undefined;
}
