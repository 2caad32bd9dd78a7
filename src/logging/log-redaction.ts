/**
 * Query parameters whose values never reach a log line, by name compared
 * without regard to case or percent-encoding (`?ACCESS_TOKEN=`, `?Token=`,
 * `?to%6Ben=`): the names clients and libraries put credentials under.
 */
export const SECRET_PARAMETERS = new Set([
  'access_token',
  'token',
  'id_token',
  'refresh_token',
  'api_key',
  'apikey',
  'api-key',
  'key',
  'secret',
  'client_secret',
  'password',
  'auth',
  'authorization',
  'bearer',
  'jwt',
]);

/** What a redacted value reads as: percent-encoded, as URLSearchParams writes it. */
const REDACTED = '%5BREDACTED%5D';

/**
 * Credentials by their shape, wherever in the URL they are (a path segment, a
 * parameter of any name): an opaque token of this service (`pst_…`) and a JWT
 * (three base64url parts, the first an encoded JSON object: `eyJ…`).
 */
const TOKEN_SHAPED = /pst_[A-Za-z0-9._~+/=-]*|eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g;

/** The text with every token-shaped value (see TOKEN_SHAPED) replaced. */
export function redactTokens(text: string): string {
  // Every request comes through here: the common text is returned without a regular expression.
  if (!text.includes('pst_') && !text.includes('eyJ')) return text;
  return text.replace(TOKEN_SHAPED, REDACTED);
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}

/**
 * The URL as logged: path and query, with every token-shaped value and the
 * value of every parameter named as a credential replaced. passport-http-bearer
 * ignores `?access_token=` here, but clients still send it, and a token in a
 * log is a leaked token. Parameters are split at `&` and at `;` (which some
 * servers and proxies take as a separator too).
 */
export function redactUrl(url: string): string {
  const logged = redactTokens(url);
  const queryStart = logged.indexOf('?');
  if (queryStart === -1) return logged;
  const parts = logged.slice(queryStart + 1).split(/([&;])/);
  let redacted = false;
  // Even indexes are parameters, odd ones the separators between them.
  for (let i = 0; i < parts.length; i += 2) {
    const equals = parts[i].indexOf('=');
    if (equals > 0 && SECRET_PARAMETERS.has(decodedName(parts[i].slice(0, equals)))) {
      parts[i] = `${parts[i].slice(0, equals)}=${REDACTED}`;
      redacted = true;
    }
  }
  return redacted ? `${logged.slice(0, queryStart)}?${parts.join('')}` : logged;
}
