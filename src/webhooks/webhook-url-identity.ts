/** RFC 3986 section 2.3: characters whose percent-encoded form means the same as the character. */
const UNRESERVED = /^[A-Za-z0-9._~-]$/;

/** What a path or query may hold as it is (RFC 3986 pchar and "/" "?"); anything else is escaped. */
const ALLOWED = /^[A-Za-z0-9._~!$&'()*+,;=:@/?-]$/;

const escaped = (character: string): string =>
  [...new TextEncoder().encode(character)]
    .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
    .join('');

/**
 * A path or query in the normal form of RFC 3986 section 6.2.2: escapes of
 * unreserved characters decoded (`%78` is `x`), the hex of the other escapes
 * in upper case (`%2f` is `%2F`), and a character no URI may hold as it is
 * (WHATWG leaves `|`, `^`, `{`… unescaped in a query) escaped.
 */
function normalisedComponent(text: string): string {
  return text.replace(/%[0-9A-Fa-f]{2}|[^]/gu, (part) => {
    if (part.length === 3 && part.startsWith('%')) {
      const character = String.fromCharCode(parseInt(part.slice(1), 16));
      return UNRESERVED.test(character) ? character : part.toUpperCase();
    }
    return ALLOWED.test(part) || part === '%' ? part : escaped(part);
  });
}

/** An IPv4-mapped IPv6 literal (`[::ffff:7f00:1]`, as URL writes one) as its IPv4 address. */
function mappedIpv4(hostname: string): string | undefined {
  const match = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(hostname);
  if (!match) return undefined;
  const [high, low] = [parseInt(match[1], 16), parseInt(match[2], 16)];
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * What two subscription URLs that name the same receiver have in common, so
 * that spellings of one URL count as one subscription. The WHATWG parser
 * (`new URL`) already lower-cases scheme and host, decodes an escaped host,
 * drops the default port and resolves `.` and `..` segments (also escaped);
 * on top of that come RFC 3986's normal form of path and query (see
 * normalisedComponent), an empty query taken as none (`/x?` is `/x`), and an
 * IPv4-mapped IPv6 address taken as its IPv4 address (the sender connects to
 * the same host). What stays apart: reserved characters and their escapes
 * (`/a/b` and `/a%2Fb`), letter case in path and query, parameter order.
 * Stored URLs are compared through this too, so no stored form has to change.
 */
export function webhookUrlIdentity(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Never for a stored or accepted URL; equal to itself, at least.
    return text;
  }
  const hostname = mappedIpv4(url.hostname) ?? url.hostname;
  const host = url.port === '' ? hostname : `${hostname}:${url.port}`;
  return `${url.protocol}//${host}${normalisedComponent(url.pathname)}${normalisedComponent(url.search)}`;
}
