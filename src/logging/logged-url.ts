import { redactUrl } from './log-redaction.js';

/**
 * The longest URL a log line holds, in characters. A request head may be
 * 16 KiB, and a public route (`/health/live?…`) or an unknown path takes one
 * from anybody: a line per request as long as that would let any client fill
 * the logs 16 KiB at a time.
 */
const LOGGED_URL_MAX = 2048;

/**
 * The URL as a log line shows it: redacted (see redactUrl), then cut after
 * LOGGED_URL_MAX characters with a suffix that says how many were cut.
 * Redacted before it is cut, so that a cut through a token cannot hide its
 * shape from the redaction.
 */
export function loggedUrl(url: string): string {
  const redacted = redactUrl(url);
  if (redacted.length <= LOGGED_URL_MAX) return redacted;
  return `${redacted.slice(0, LOGGED_URL_MAX)}…[cut ${redacted.length - LOGGED_URL_MAX} characters]`;
}
