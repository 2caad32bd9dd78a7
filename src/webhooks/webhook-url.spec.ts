import { describe, expect, it } from 'vitest';
import type { HostResolver } from './host-resolver.js';
import { resolvedTargetProblem, webhookUrlProblem } from './webhook-url.js';

const STRICT = { allowHttp: false, allowPrivateTargets: false };
const HTTP = { allowHttp: true, allowPrivateTargets: false };
const OPEN = { allowHttp: true, allowPrivateTargets: true };

/** A resolver that answers from a table, and does not resolve what is not in it. */
const resolverOf = (table: Record<string, string[]>): HostResolver => ({
  resolve: (host: string) =>
    table[host]
      ? Promise.resolve(table[host].map((address) => ({ address, family: 4 })))
      : Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })),
});

describe('webhookUrlProblem', () => {
  it('accepts https URLs, and http ones only when allowed, naming the setting', () => {
    expect(webhookUrlProblem('https://receiver.example.com/hooks?x=1', STRICT)).toBeUndefined();
    expect(webhookUrlProblem('http://receiver.example.com/', STRICT)).toBe(
      'url must use https (WEBHOOK_ALLOW_HTTP=true allows http)',
    );
    expect(webhookUrlProblem('http://127.0.0.1:8080/', OPEN)).toBeUndefined();
  });

  it('says why a URL is refused', () => {
    expect(webhookUrlProblem('not a url', HTTP)).toMatch(/^url must be an absolute URL/);
    expect(webhookUrlProblem('/relative', HTTP)).toMatch(/^url must be an absolute URL/);
    expect(webhookUrlProblem('ftp://example.com/', HTTP)).toBe('url must use https or http');
    expect(webhookUrlProblem('file:///etc/passwd', STRICT)).toBe('url must use https');
    expect(webhookUrlProblem('https://user:pw@example.com/', STRICT)).toBe(
      'url must not contain a user name or password',
    );
    expect(webhookUrlProblem('https://example.com/#x', STRICT)).toMatch(/fragment/);
  });

  it('refuses localhost and non-public literals unless private targets are allowed', () => {
    for (const url of [
      'https://localhost/',
      'https://LOCALHOST./',
      'https://api.localhost/',
      'https://127.0.0.1/',
      'https://[::1]/',
      'https://[::7f00:1]/',
      'https://[::ffff:0:7f00:1]/',
      'https://[fec0::1]/',
      'https://10.1.2.3/',
    ]) {
      expect(webhookUrlProblem(url, STRICT), url).toMatch(/WEBHOOK_ALLOW_PRIVATE_TARGETS=true/);
      expect(webhookUrlProblem(url, OPEN), url).toBeUndefined();
    }
    expect(webhookUrlProblem('https://[::ffff:8.8.8.8]/', STRICT)).toBeUndefined();
    expect(webhookUrlProblem('https://8.8.8.8/', STRICT)).toBeUndefined();
  });
});

describe('resolvedTargetProblem', () => {
  const resolver = resolverOf({
    'internal.example.com': ['10.1.2.3'],
    'mixed.example.com': ['93.184.215.14', '127.0.0.1'],
    'public.example.com': ['93.184.215.14'],
  });
  const problem = (url: string, rules = STRICT) =>
    resolvedTargetProblem(new URL(url), rules, resolver);

  it('refuses a name with a non-public address, without showing the address', async () => {
    for (const url of ['https://internal.example.com/', 'https://mixed.example.com/']) {
      const message = await problem(url);
      expect(message).toMatch(/resolves to an address that is not public.*PRIVATE_TARGETS/);
      expect(message).not.toMatch(/10\.1\.2\.3|127\.0\.0\.1/);
      expect(await problem(url, OPEN)).toBeUndefined();
    }
  });

  it('accepts a public name, and a name that does not resolve yet', async () => {
    expect(await problem('https://public.example.com/')).toBeUndefined();
    expect(await problem('https://not-yet.example.com/')).toBeUndefined();
  });
});
