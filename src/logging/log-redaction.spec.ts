import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactTokens, redactUrl } from './log-redaction.js';
import { requestIdFrom } from '../http/request-id.js';

describe('redactUrl', () => {
  it('replaces token parameters and keeps the rest', () => {
    expect(redactUrl('/plants?limit=5&access_token=pst_secret')).toBe(
      '/plants?limit=5&access_token=%5BREDACTED%5D',
    );
    expect(redactUrl('/plants?token=abc')).not.toContain('abc');
    expect(redactUrl('/plants?limit=5')).toBe('/plants?limit=5');
    expect(redactUrl('/plants')).toBe('/plants');
  });

  it('redacts a token parameter whose name is percent-encoded', () => {
    expect(redactUrl('/plants?to%6Ben=pst_secret')).not.toContain('pst_secret');
    expect(redactUrl('/plants?limit=1&access%5Ftoken=pst_secret')).not.toContain('pst_secret');
  });

  it.each([
    ['/plants?ACCESS_TOKEN=pst_secret', '/plants?ACCESS_TOKEN=%5BREDACTED%5D'],
    ['/plants?Token=opaque-secret', '/plants?Token=%5BREDACTED%5D'],
    ['/plants?api_key=opaque-secret&limit=5', '/plants?api_key=%5BREDACTED%5D&limit=5'],
    ['/plants?limit=5;access_token=opaque-secret', '/plants?limit=5;access_token=%5BREDACTED%5D'],
    [
      '/plants?id_token=eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln',
      '/plants?id_token=%5BREDACTED%5D',
    ],
    ['/plants/eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln', '/plants/%5BREDACTED%5D'],
    ['/plants/pst_abcDEF123-_x?limit=1', '/plants/%5BREDACTED%5D?limit=1'],
    ['/plants?q=pst_abcDEF123', '/plants?q=%5BREDACTED%5D'],
  ])('redacts %s whatever its case, separator or place', (url, logged) => {
    expect(redactUrl(url)).toBe(logged);
  });

  it('leaves a query that merely mentions a token or holds an escape as it was', () => {
    expect(redactUrl('/plants?limit=20&tokens=x')).toBe('/plants?limit=20&tokens=x');
    expect(redactUrl('/plants?q=%41')).toBe('/plants?q=%41');
  });
});

/** A token of this service's shape: pst_ and the base64url of 32 bytes. */
const TOKEN = `pst_${Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37 + 11) % 256)).toString('base64url')}`;
const BODY = TOKEN.slice(4);

/**
 * `character` percent-encoded `times` times, with hex digits in the given
 * case: each further time encodes the `%` only (`%255F`, what encoding an
 * encoded URL again gives), or every character (`%25%35%46`) when `whole`.
 */
function encoded(character: string, times: number, upper = true, whole = false): string {
  if (times === 0) return character;
  const hex = (text: string) =>
    [...new TextEncoder().encode(text)]
      .map((byte) => `%${byte.toString(16).padStart(2, '0')}`)
      .join('');
  let text = hex(character);
  for (let i = 1; i < times; i++) text = whole ? hex(text) : text.replace(/%/g, '%25');
  return upper ? text.toUpperCase() : text.toLowerCase();
}

/** The text and every spelling of it that percent-decoding, applied again and again, gives. */
function spellings(text: string): string[] {
  const all = [text];
  for (let i = 0; i < 10; i++) {
    const next = all[all.length - 1].replace(/%([0-9a-f]{2})/gi, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
    if (next === all[all.length - 1]) break;
    all.push(next);
  }
  return all;
}

/** Every 8-character piece of `secret` that any spelling of `text` still holds. */
const fragmentsIn = (text: string, secret: string): string[] =>
  Array.from({ length: secret.length - 7 }, (_, i) => secret.slice(i, i + 8)).filter((piece) =>
    spellings(text).some((spelling) => spelling.includes(piece)),
  );

describe('redaction after percent-decoding', () => {
  it.each([
    ['`_` as %5F in the path', `/nope/pst${encoded('_', 1)}${BODY}`],
    ['`_` as %5f in the path', `/nope/pst${encoded('_', 1, false)}${BODY}`],
    ['`p` as %70 in the query', `/plants?x=${encoded('p', 1)}st_${BODY}`],
    ['`_` twice encoded, %255F', `/nope/pst%255F${BODY}`],
    ['`_` twice encoded, %25%35%66', `/nope/pst${encoded('_', 2, false, true)}${BODY}`],
    ['`_` three times encoded, %25255f', `/nope/pst${encoded('_', 3, false)}${BODY}`],
    [
      'a character of the body as %XX',
      `/nope/${TOKEN.slice(0, 7)}${encoded(TOKEN[7], 1)}${TOKEN.slice(8)}`,
    ],
    ['`-` as %2D inside the token', `/nope/pst_abc${encoded('-', 1)}${BODY}`],
    [
      '`-` as %2d inside the token, in the query',
      `/plants?q=pst_abc${encoded('-', 1, false)}${BODY}&limit=1`,
    ],
    ['every character encoded', `/nope/${[...TOKEN].map((c) => encoded(c, 1)).join('')}`],
    ['every character twice encoded', `/nope/${[...TOKEN].map((c) => encoded(c, 2)).join('')}`],
    [
      'every character twice encoded, whole',
      `/nope/${[...TOKEN].map((c) => encoded(c, 2, true, true)).join('')}`,
    ],
    [
      'a JWT with `e` as %65',
      `/nope/${encoded('e', 1)}yJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0.${BODY}`,
    ],
    [
      'a JWT with `.` as %2E',
      `/nope/eyJhbGciOiJFUzI1NiJ9${encoded('.', 1)}eyJzdWIiOiJhIn0${encoded('.', 2)}${BODY}`,
    ],
  ])('leaves no piece of a token whose %s', (_, url) => {
    const logged = redactUrl(url);
    expect(logged).toContain('%5BREDACTED%5D');
    expect(fragmentsIn(logged, BODY)).toEqual([]);
    expect(fragmentsIn(redactTokens(url), BODY)).toEqual([]);
  });

  it.each([
    ['with `_` twice encoded', `/plants?access${encoded('_', 2)}token=${BODY}`],
    ['with `t` encoded', `/plants?${encoded('t', 1)}oken=${BODY}`],
    [
      'twice encoded whole',
      `/plants?${[...'api_key'].map((c) => encoded(c, 2, false, true)).join('')}=${BODY}`,
    ],
    ['after an encoded `&`', `/plants?q=1${encoded('&', 1)}token${encoded('=', 1)}${BODY}`],
    [
      'holding an encoded `&`',
      `/plants?token=${BODY.slice(0, 9)}${encoded('&', 1)}${BODY.slice(9)}`,
    ],
  ])('redacts the whole value of a credential-named parameter %s', (_, url) => {
    const logged = redactUrl(url);
    expect(logged).toContain('%5BREDACTED%5D');
    expect(fragmentsIn(logged, BODY)).toEqual([]);
  });

  it('keeps the spelling of everything it does not redact', () => {
    expect(redactUrl('/nope/pst%5Fabc?limit=%31&q=%7e&r=x%41')).toBe(
      '/nope/%5BREDACTED%5D?limit=%31&q=%7e&r=x%41',
    );
    expect(redactUrl('/plants/%2541?q=100%&r=%zz')).toBe('/plants/%2541?q=100%&r=%zz');
  });

  it('never lets a token through, however its characters are percent-encoded', () => {
    const character = fc.record({
      times: fc.integer({ min: 0, max: 3 }),
      upper: fc.boolean(),
      whole: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.constantFrom('pst_', 'eyJ'),
        fc.array(character, { minLength: 80, maxLength: 80 }),
        fc.constantFrom('/nope/', '/plants/', '/plants?q=', '/plants?limit=1&x=a', '/x?y=1;z='),
        fc.constantFrom('', '?limit=1', '/x', '&y=2'),
        (bytes, prefix, encodings, before, after) => {
          const body = Buffer.from(bytes).toString('base64url');
          const token =
            prefix === 'pst_' ? `pst_${body}` : `eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0.${body}`;
          const spelled = [...token]
            .map((c, i) => encoded(c, encodings[i].times, encodings[i].upper, encodings[i].whole))
            .join('');
          const url = `${before}${spelled}${after}`;
          expect(fragmentsIn(redactUrl(url), body)).toEqual([]);
          expect(fragmentsIn(redactTokens(url), body)).toEqual([]);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('requestIdFrom', () => {
  it('keeps a well-formed client id and replaces anything else with a UUID', () => {
    expect(requestIdFrom('abc-123')).toBe('abc-123');
    const uuid = /^[0-9a-f-]{36}$/;
    expect(requestIdFrom(undefined)).toMatch(uuid);
    expect(requestIdFrom('has space')).toMatch(uuid);
    expect(requestIdFrom('x'.repeat(129))).toMatch(uuid);
    expect(requestIdFrom(['a', 'b'])).toMatch(uuid);
    expect(requestIdFrom('line\nbreak')).toMatch(uuid);
  });
});
