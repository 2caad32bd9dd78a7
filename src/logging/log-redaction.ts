/** Query parameters whose values never reach a log line. */
export const SECRET_PARAMETERS = ['access_token', 'token'];

/**
 * The URL as logged: path and query, with any token-like parameter's value
 * replaced. passport-http-bearer ignores `?access_token=` here, but clients
 * still send it, and a token in a log is a leaked token.
 */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  // Every request with a query comes through here. A name decodes to "token" or
  // "access_token" only if the query holds that text or a percent escape, so
  // the common query (`?limit=20`) is returned without parsing it.
  if (!url.includes('token', queryStart) && !url.includes('%', queryStart)) return url;
  const params = new URLSearchParams(url.slice(queryStart + 1));
  let redacted = false;
  for (const name of SECRET_PARAMETERS) {
    if (params.has(name)) {
      params.set(name, '[REDACTED]');
      redacted = true;
    }
  }
  return redacted ? `${url.slice(0, queryStart)}?${params.toString()}` : url;
}
