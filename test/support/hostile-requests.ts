import { METHODS } from 'node:http';
import fc from 'fast-check';
import { describeRequest } from './hostile-answer.js';
import { jsonText } from './plants-client.js';

/** One HTTP request as the fuzzers send it (through Fastify's inject or a raw socket). */
export interface HostileRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** Who a hostile request claims to be. */
export interface FuzzCredentials {
  /** A live token of an owner with no plants: every request made with it must stay harmless. */
  attackerToken: string;
  /** A token that was revoked before the run. */
  revokedToken: string;
  /** Ids the victim owns: the attacker's deletes of them must all be 404s. */
  victimIds: bigint[];
  /** The victim's webhook subscription: the attacker's deletes and reads of it must be 404s. */
  victimSubscriptionId?: string;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** Text of every kind: code points anywhere in Unicode, control characters, SQL and path metacharacters. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    "'; DROP TABLE plants;--",
    '" OR 1=1 --',
    '%',
    '_',
    '\\',
    '../../etc/passwd',
    '\u0000',
    '\ud800',
    '\udfff',
    '\uffff',
    '\u202e',
    '${jndi:ldap://x}',
    '{{7*7}}',
    '<script>alert(1)</script>',
  ),
);

/** Any JSON value, including deep and wide ones; objects never carry both id and name (so never a valid NewPlant). */
const anyJson = fc
  .jsonValue({ maxDepth: 6 })
  .filter(
    (value) =>
      typeof value !== 'object' || value === null || Array.isArray(value) || !('id' in value),
  );

/** Ids a NewPlant must refuse. (5, 5.0 and 1e3 are valid ids, so none of those.) */
const invalidIdJson = fc.oneof(
  fc.bigInt({ min: INT64_MAX + 1n, max: 2n ** 80n }).map(String),
  fc.bigInt({ min: -(2n ** 80n), max: INT64_MIN - 1n }).map(String),
  fc
    .double({ noNaN: true, noDefaultInfinity: true })
    .filter((x) => !Number.isInteger(x))
    .map((x) => JSON.stringify(x)),
  fc.bigInt({ min: INT64_MIN, max: INT64_MAX }).map((id) => JSON.stringify(String(id))),
  fc.constantFrom('null', 'true', 'false', '[]', '{}', '[1]', '{"$gt":0}', '"0x10"', '1e400'),
  fc.constantFrom('-1e400', '1.5', '0.15e1', '9223372036854775808', '-9223372036854775809'),
  anyJson.map((value) => JSON.stringify(value)).filter((text) => !/^-?\d+$/.test(text)),
);

const validId = fc.bigInt({ min: INT64_MIN, max: INT64_MAX });
const validName = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 });

/** Names and tags a NewPlant must refuse: not a string, empty, NUL, lone surrogates, too long. */
const invalidTextJson = fc.oneof(
  fc.constantFrom('""', '"a\\u0000b"', '"\\ud800"', '"x\\udc00y"', '5', 'true', '[]', '{}'),
  fc.integer({ min: 256, max: 400 }).map((n) => JSON.stringify('é'.repeat(n))),
  fc.integer({ min: 256, max: 300 }).map((n) => JSON.stringify('🌵'.repeat(n))),
  anyJson.filter((value) => typeof value !== 'string').map((value) => JSON.stringify(value)),
);

/**
 * Keys other than id, name and tag. Includes the names of Object.prototype's
 * members, which an object mapper may treat specially.
 */
const extraKey = fc.oneof(
  fc.string({ maxLength: 12 }).filter((key) => !['id', 'name', 'tag'].includes(key)),
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'valueOf',
    'hasOwnProperty',
    '__defineGetter__',
    'isPrototypeOf',
    'owner',
    'access_token',
    'ID',
    'Name',
    'tag ',
    '',
  ),
);

/** A JSON object text from parts that are already JSON. */
const objectText = (entries: Array<[string, string]>) =>
  `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`;

const nameEntry = validName.map((name): [string, string] => ['name', JSON.stringify(name)]);
const idEntry = validId.map((id): [string, string] => ['id', String(id)]);

/** NewPlant-shaped bodies that break exactly one rule, so every one of them must be refused. */
const almostNewPlant = fc.oneof(
  fc.tuple(invalidIdJson, nameEntry).map(([id, name]) => objectText([['id', id], name])),
  fc.tuple(idEntry, invalidTextJson).map(([id, name]) => objectText([id, ['name', name]])),
  fc
    // An empty tag and a null tag are valid (no minimum; null is "no tag").
    .tuple(
      idEntry,
      nameEntry,
      invalidTextJson.filter((tag) => tag !== '""' && tag !== 'null'),
    )
    .map(([id, name, tag]) => objectText([id, name, ['tag', tag]])),
  fc
    .tuple(idEntry, nameEntry, extraKey, anyJson)
    .map(([id, name, key, value]) => objectText([id, name, [key, JSON.stringify(value)]])),
  nameEntry.map((name) => objectText([name])),
  idEntry.map((id) => objectText([id])),
  // Duplicate keys with different values: ambiguous, so refused even when both would be valid.
  // (Identical copies are not ambiguous, and the parser takes them.)
  fc
    .tuple(validId, nameEntry)
    .map(([id, name]) => objectText([['id', String(id)], name, ['id', String(id ^ 1n)]])),
  fc
    .tuple(idEntry, validName)
    .map(([id, name]) =>
      objectText([id, ['name', JSON.stringify(name)], ['name', JSON.stringify(`${name}.`)]]),
    ),
  // Prototype pollution attempts, at the top and nested.
  fc
    .tuple(idEntry, nameEntry, fc.constantFrom('__proto__', 'constructor', 'prototype'))
    .map(([id, name, key]) =>
      objectText([id, name, ['tag', objectText([[key, '{"polluted":true}']])]]),
    ),
  fc
    .tuple(idEntry, nameEntry)
    .map(([id, name]) =>
      objectText([id, name, ['constructor', '{"prototype":{"polluted":true}}']]),
    ),
);

/** A valid NewPlant cut short: never valid JSON. */
const truncated = fc.tuple(validId, validName, fc.nat()).map(([id, name, cut]) => {
  const text = jsonText({ id, name });
  return text.slice(0, cut % (text.length - 1));
});

/** Deep nesting: a stack-overflow attempt on every recursive layer (parser, mapper, validator). */
const deep = fc
  .tuple(
    fc.integer({ min: 100, max: 7000 }),
    fc.constantFrom('[', '{"a":', '{"tag":'),
    fc.boolean(),
  )
  .map(([depth, open, inPlant]) => {
    const close = open === '[' ? ']' : '}';
    const nested = open.repeat(depth) + '1' + close.repeat(depth);
    return inPlant ? `{"id":1,"name":"deep","tag":${nested}}` : nested;
  });

/** Bodies larger than the limit the fuzzed app runs with (16 KiB): 413s. */
const huge = fc
  .tuple(fc.integer({ min: 17_000, max: 200_000 }), fc.constantFrom('a', '🌵', ' '))
  .map(([size, unit]) => `{"id":1,"name":"${unit.repeat(Math.ceil(size / unit.length))}"}`);

/** Raw bytes: invalid UTF-8, BOMs, binary. */
const bytes = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((array) => Buffer.from(array)),
  fc.constantFrom(
    // A BOM before valid JSON may be ignored (RFC 8259 section 8.1); here the JSON is invalid.
    Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{"id":"1","name":"bom"}')]),
    Buffer.from('{"id":1,"name":"\xff\xfe"}', 'latin1'),
    Buffer.from([0xc0, 0x80]),
    Buffer.from('{"id":1,"name":"a"}', 'utf16le'),
  ),
);

const jsonBody = fc.oneof(
  { weight: 4, arbitrary: almostNewPlant },
  { weight: 2, arbitrary: anyJson.map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: truncated },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: huge },
  { weight: 1, arbitrary: anyText },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\n', '{}', '[]', 'null', '0', '""') },
);

const body = fc.oneof({ weight: 6, arbitrary: jsonBody }, { weight: 1, arbitrary: bytes });

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'application/json; charset=latin1',
      'APPLICATION/JSON',
      'application/json;',
      'application/jsonx',
      'application/vnd.api+json',
      'text/plain',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=----x',
      'application/xml',
      'application/octet-stream',
      '*/*',
      ';',
      '',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 30 }) },
);

const bogusToken = fc.oneof(
  fc.base64String({ minLength: 4, maxLength: 80 }).map((t) => `pst_${t}`),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 60 }),
  fc.constantFrom("' OR '1'='1", '%00', '../../', 'null', 'undefined', 'pst_'),
  fc.integer({ min: 1000, max: 9000 }).map((n) => 'A'.repeat(n)),
);

/** The Authorization header, if any: absent, malformed, unknown, revoked, or the attacker's own. */
const authorization = (credentials: FuzzCredentials) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constant(`Bearer ${credentials.attackerToken}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constant(`Bearer ${credentials.revokedToken}`) },
    { weight: 1, arbitrary: bogusToken.map((token) => `Bearer ${token}`) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer a b', 'Token x', ''),
        bogusToken,
        fc.constant(`bearer  ${credentials.attackerToken}`),
        fc.constant(`Bearer ${credentials.attackerToken}, Bearer ${credentials.revokedToken}`),
      ),
    },
  );

/** Headers that should change nothing. */
const oddHeaders = fc.dictionary(
  fc.oneof(
    fc.constantFrom(
      'x-forwarded-for',
      'x-forwarded-host',
      'x-http-method-override',
      'x-original-url',
      'accept',
      'accept-encoding',
      'content-encoding',
      'cookie',
      'origin',
      'range',
      'if-none-match',
      'x-owner',
    ),
    fc.stringMatching(/^x-[a-z0-9-]{1,20}$/),
  ),
  fc.oneof(
    fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
    fc.constantFrom('gzip', 'DELETE', '/plants/1', '*', 'bytes=0-1', '127.0.0.1', 'alice'),
    fc.integer({ min: 100, max: 8000 }).map((n) => 'x'.repeat(n)),
  ),
  { maxKeys: 3 },
);

/** Path segments where the id goes: the victim's ids, and everything an id must not be. */
const idSegment = (credentials: FuzzCredentials) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...credentials.victimIds).map(String) },
    { weight: 1, arbitrary: validId.map(String) },
    {
      weight: 3,
      arbitrary: fc.oneof(
        fc.constantFrom(
          '1.5',
          '1e3',
          '0x10',
          '+5',
          '-',
          ' 1',
          '1 ',
          '9223372036854775808',
          '-9223372036854775809',
          '%00',
          '%2e%2e',
          '%2F1',
          '%E0%A4%A',
          '%ZZ',
          '%',
          '..',
          '__proto__',
          'constructor',
          'null',
          '1;DROP TABLE plants',
          "1' OR '1'='1",
          '１',
          '٣',
        ),
        fc.integer({ min: 20, max: 3000 }).map((n) => '9'.repeat(n)),
        anyText.map((text) => encodeURIComponent(text.toWellFormed())),
      ),
    },
  );

const query = (credentials: FuzzCredentials) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant('') },
    {
      weight: 3,
      arbitrary: fc
        .oneof(
          fc.constantFrom(
            'abc',
            '-1',
            '1.5',
            '',
            '1e3',
            '0x10',
            '2147483648',
            '99999999999999999999',
            '%00',
            '%E0%A4%A',
            ' 1',
            '１',
          ),
          anyText.map((text) => encodeURIComponent(text.toWellFormed())),
        )
        .map((limit) => `?limit=${limit}`),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '?limit=1&limit=2',
        '?limit[]=1',
        '?limit[a]=1',
        '?__proto__[polluted]=1',
        '?constructor[prototype][polluted]=1',
        '?toString=1',
        '?limit=1&offset=5',
        '?owner=victim',
        `?access_token=${credentials.attackerToken}`,
        `?access_token=${credentials.revokedToken}`,
        '?%',
        '?&&&',
        '?=',
        '?limit',
        '?#x',
      ),
    },
    { weight: 1, arbitrary: fc.webQueryParameters().map((q) => `?${q}`) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1000, max: 60_000 }).map((n) => `?x=${'y'.repeat(n)}`),
    },
  );

/** The webhook endpoints, with the victim's subscription id or anything else where the id goes. */
const webhookPath = (credentials: FuzzCredentials) => {
  const id = fc.oneof(
    {
      weight: 2,
      arbitrary: fc.constant(
        credentials.victimSubscriptionId ?? '3f1c2a8e-9b7d-4c55-a1e2-6f0d4b8c9e11',
      ),
    },
    { weight: 3, arbitrary: idSegment(credentials) },
  );
  return fc.oneof(
    fc.constant('/webhooks'),
    fc.constantFrom('/webhooks/', '/webhooks//deliveries', '/WEBHOOKS', '/webhooks/%2e%2e/plants'),
    id.map((segment) => `/webhooks/${segment}`),
    id.map((segment) => `/webhooks/${segment}/deliveries`),
  );
};

const path = (credentials: FuzzCredentials) =>
  fc.oneof(
    { weight: 3, arbitrary: webhookPath(credentials) },
    { weight: 4, arbitrary: fc.constant('/plants') },
    { weight: 4, arbitrary: idSegment(credentials).map((id) => `/plants/${id}`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '/plants/',
        '//plants',
        '/plants//1',
        '/plants/1/',
        '/plants/1/x',
        '/PLANTS',
        '/Plants/1',
        '/plants;x=1',
        '/plants%2F1',
        '/plants/..',
        '/plants/../plants',
        '/./plants',
        '/%2e%2e/plants',
        '/docs/%2e%2e/%2e%2e/etc/passwd',
        '/docs/..%2f..%2fpackage.json',
        '/health/../plants',
        '/',
        '*',
        '/%00',
        '/\u00e9',
      ),
    },
    { weight: 1, arbitrary: fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1000, max: 60_000 }).map((n) => `/${'a'.repeat(n)}`),
    },
  );

const method = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('GET', 'POST', 'DELETE') },
  { weight: 2, arbitrary: fc.constantFrom('PUT', 'PATCH', 'HEAD', 'OPTIONS') },
  { weight: 1, arbitrary: fc.constantFrom(...METHODS.filter((m) => m !== 'CONNECT')) },
);

/** Every request of the generator: nothing here may be a valid create, and nothing may cause a 5xx. */
export function hostileRequest(credentials: FuzzCredentials): fc.Arbitrary<HostileRequest> {
  return fc
    .record({
      method,
      path: path(credentials),
      query: query(credentials),
      authorization: authorization(credentials),
      contentType: fc.option(contentType, { freq: 5 }),
      headers: oddHeaders,
      body: fc.option(body, { freq: 6 }),
    })
    .map(({ method, path, query, authorization, contentType, headers, body }) => {
      const all: Record<string, string> = { ...headers };
      if (authorization !== undefined) all.authorization = authorization;
      if (contentType !== null) all['content-type'] = contentType;
      const request: HostileRequest = {
        method,
        url: path + query,
        headers: all,
        body: body ?? undefined,
      };
      // Counterexamples can be megabytes long: fast-check prints this instead.
      return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) });
    });
}
