/**
 * Before a server is measured, one pass over what the bench's requests do,
 * checked answer by answer: a bench of servers that answer fast but wrongly
 * measures nothing. Each server is probed with an owner of its own.
 */

/** One request and what its answer must be. */
interface Step {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: string;
  /** false: no Authorization header. */
  auth?: boolean;
  status: number;
  /** The exact JSON body of a 2xx answer. */
  json?: unknown;
}

const STEPS: Step[] = [
  { method: 'GET', path: '/plants', auth: false, status: 401 },
  {
    method: 'POST',
    path: '/plants',
    body: '{"id":1,"name":"probe 1","tag":"t"}',
    status: 200,
    json: { name: 'probe 1', tag: 't' },
  },
  {
    method: 'POST',
    path: '/plants',
    body: '{"id":2,"name":"probe 2"}',
    status: 200,
    json: { name: 'probe 2' },
  },
  // An exact replay, then the same id with another name.
  {
    method: 'POST',
    path: '/plants',
    body: '{"id":2,"name":"probe 2"}',
    status: 200,
    json: { name: 'probe 2' },
  },
  { method: 'POST', path: '/plants', body: '{"id":2,"name":"other"}', status: 409 },
  { method: 'POST', path: '/plants', body: '{"id":3,"name":"x","extra":1}', status: 400 },
  { method: 'GET', path: '/plants?limit=1', status: 200, json: [{ name: 'probe 1', tag: 't' }] },
  {
    method: 'GET',
    path: '/plants',
    status: 200,
    json: [{ name: 'probe 1', tag: 't' }, { name: 'probe 2' }],
  },
  { method: 'GET', path: '/plants?limit=abc', status: 400 },
  { method: 'DELETE', path: '/plants/1', status: 204 },
  { method: 'DELETE', path: '/plants/1', status: 404 },
  { method: 'GET', path: '/plants', status: 200, json: [{ name: 'probe 2' }] },
];

/** The headers of the service's per-request features, as the same-work reference must send them. */
const FEATURE_HEADERS = [
  'cache-control',
  'content-security-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-frame-options',
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-reset',
  // A page that has a next one: the same cursor (every server has the bench's CURSOR_SECRET).
  'link',
] as const;

export type FeatureHeaders = Partial<Record<(typeof FEATURE_HEADERS)[number], string>>;

export interface ProbeResult {
  problems: string[];
  /** The feature headers of the answer to an authenticated list (sent with X-Request-Id). */
  headers: FeatureHeaders;
}

const REQUEST_ID = 'bench-probe-0001';

/** Runs every step against `url` with `token` (an owner with no plants yet). */
export async function probe(url: string, token: string): Promise<ProbeResult> {
  const problems: string[] = [];
  for (const step of STEPS) {
    const what = `${step.method} ${step.path}${step.body ? ` ${step.body}` : ''}`;
    const response = await fetch(`${url}${step.path}`, {
      method: step.method,
      body: step.body,
      headers: {
        ...(step.auth === false ? {} : { authorization: `Bearer ${token}` }),
        ...(step.body ? { 'content-type': 'application/json' } : {}),
      },
    });
    const text = await response.text();
    if (response.status !== step.status) {
      problems.push(`${what}: ${response.status}, not ${step.status}: ${text.slice(0, 200)}`);
    } else if (step.json !== undefined && text !== JSON.stringify(step.json)) {
      problems.push(`${what}: ${text.slice(0, 200)}, not ${JSON.stringify(step.json)}`);
    } else if (step.status >= 400 && !isError(text, step.status)) {
      problems.push(`${what}: the error body ${text.slice(0, 200)} is not {"error", "message"}`);
    }
  }
  // A second plant, so that a page of one has a next link; id 10, which sorts before 2 as text,
  // so that a list ordered by the id's text (not its number) sends another cursor.
  const created = await fetch(`${url}/plants`, {
    method: 'POST',
    body: '{"id":10,"name":"probe 10"}',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  });
  await created.arrayBuffer();
  if (created.status !== 200) problems.push(`POST /plants {"id":10}: ${created.status}, not 200`);
  const response = await fetch(`${url}/plants?limit=1`, {
    headers: { authorization: `Bearer ${token}`, 'x-request-id': REQUEST_ID },
  });
  await response.arrayBuffer();
  const headers: FeatureHeaders = {};
  for (const name of FEATURE_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { problems, headers };
}

function isError(text: string, status: number): boolean {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    return body.error === status && typeof body.message === 'string';
  } catch {
    return false;
  }
}

/**
 * What `server` sends differently from `expected` in the feature headers:
 * nothing for the same-work reference against the service. The request id
 * must be the one sent.
 */
export function headerDifferences(expected: FeatureHeaders, actual: FeatureHeaders): string[] {
  return FEATURE_HEADERS.filter((name) => expected[name] !== actual[name]).map(
    (name) => `${name}: ${actual[name] ?? '(none)'}, not ${expected[name] ?? '(none)'}`,
  );
}

/** The features every server with features must show, whatever their exact values. */
export function missingFeatures(headers: FeatureHeaders): string[] {
  const required = ['strict-transport-security', 'x-ratelimit-limit'] as const;
  const missing = required.filter((name) => headers[name] === undefined).map((n) => `no ${n}`);
  if (headers['x-request-id'] !== REQUEST_ID) missing.push('X-Request-Id not echoed');
  return missing;
}
