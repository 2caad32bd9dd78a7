import { QueryFailedError } from 'typeorm';

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

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '57014', // query_canceled (statement_timeout)
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error',
  'Connection is not established',
];

/**
 * The database cannot answer right now (down, unreachable, overloaded,
 * locked): the request may succeed when retried, so it is a 503.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const cause = driverErrorOf(error);
  const code = codeOf(cause);
  if (code !== undefined && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  const message = cause instanceof Error ? cause.message : '';
  return UNAVAILABLE_MESSAGES.some((text) => message.includes(text));
}
