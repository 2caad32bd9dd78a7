import {
  type DecodedView,
  decodedViews,
  endOf,
  fullyDecoded,
  MAX_DECODINGS,
  startOf,
} from './percent-decoding.js';

/**
 * Query parameters whose values never reach a log line, by name compared
 * without regard to case or percent-encoding, once or more (`?ACCESS_TOKEN=`,
 * `?Token=`, `?to%6Ben=`, `?to%256Ben=`): the names clients and libraries put
 * credentials under.
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

/** A span of the original text to replace: [start, end), empty for an insertion. */
type Span = [number, number];

/** The spans, in the original, of the token-shaped values of one decoded view. */
function tokenSpans(view: DecodedView, spans: Span[]): void {
  if (!view.text.includes('pst_') && !view.text.includes('eyJ')) return;
  for (const match of view.text.matchAll(TOKEN_SHAPED)) {
    spans.push([startOf(view, match.index), endOf(view, match.index + match[0].length - 1)]);
  }
}

/** The longest spelling of a credential name worth decoding: its every character escaped as deep as decoding goes. */
const LONGEST_NAME_SPELLING =
  Math.max(...[...SECRET_PARAMETERS].map((name) => name.length)) * (3 + 2 * MAX_DECODINGS);

function isSecretName(name: string): boolean {
  if (name.length > LONGEST_NAME_SPELLING) return false;
  const plain = name.includes('+') ? name.replaceAll('+', ' ') : name;
  return SECRET_PARAMETERS.has((plain.includes('%') ? fullyDecoded(plain) : plain).toLowerCase());
}

/**
 * The spans, in the original, of the values of credential-named parameters of
 * one decoded view; an empty value's span is the place where it would be.
 * Parameters are split at `&` and at `;` (which some servers and proxies take
 * as a separator too).
 */
function parameterSpans(view: DecodedView, spans: Span[]): void {
  const { text } = view;
  const query = text.indexOf('?');
  if (query === -1) return;
  for (let from = query + 1; from <= text.length;) {
    let to = from;
    let equals = -1;
    for (; to < text.length; to++) {
      const code = text.charCodeAt(to);
      if (code === 0x26 /* & */ || code === 0x3b /* ; */) break;
      if (code === 0x3d /* = */ && equals === -1) equals = to;
    }
    if (equals > from && isSecretName(text.slice(from, equals))) {
      spans.push(
        equals + 1 < to
          ? [startOf(view, equals + 1), endOf(view, to - 1)]
          : [endOf(view, equals), endOf(view, equals)],
      );
    }
    from = to + 1;
  }
}

/** The text with every span replaced by REDACTED, overlapping and touching spans as one. */
function replaced(text: string, spans: Span[]): string {
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let result = '';
  let kept = 0;
  for (let i = 0; i < spans.length;) {
    const start = spans[i][0];
    let end = spans[i][1];
    for (i++; i < spans.length && spans[i][0] <= end; i++) end = Math.max(end, spans[i][1]);
    result += text.slice(kept, start) + REDACTED;
    kept = end;
  }
  return result + text.slice(kept);
}

/**
 * The spans to redact in every spelling of the text: as it is and decoded once,
 * twice, … (see decodedViews), so that a token or a parameter that is
 * percent-encoded in whole or in part (`pst%5F…`, `%70st_…`, `pst_abc%2D…`,
 * `pst%255F…`, `?q=1%26token%3D…`) is found, and the span its decoded
 * form covers in the original is redacted whole, not just its plain part.
 */
function redacted(text: string, parameters: boolean): string {
  const spans: Span[] = [];
  for (const view of decodedViews(text)) {
    tokenSpans(view, spans);
    if (parameters) parameterSpans(view, spans);
  }
  return replaced(text, spans);
}

/** The text with every token-shaped value (see TOKEN_SHAPED), however percent-encoded, replaced. */
export function redactTokens(text: string): string {
  // Every request comes through here: the common text is returned without a regular expression.
  if (!text.includes('%') && !text.includes('pst_') && !text.includes('eyJ')) return text;
  return redacted(text, false);
}

/**
 * The URL as logged: path and query, with every token-shaped value and the
 * value of every parameter named as a credential replaced, however
 * percent-encoded. passport-http-bearer ignores `?access_token=` here, but
 * clients still send it, and a token in a log is a leaked token.
 */
export function redactUrl(url: string): string {
  if (!url.includes('%') && !url.includes('?')) return redactTokens(url);
  return redacted(url, true);
}
