import { describe, expect, it } from 'vitest';
import { webhookUrlProblem } from './webhook-url.js';

describe('webhookUrlProblem', () => {
  it('accepts https URLs, and http ones only when allowed', () => {
    expect(webhookUrlProblem('https://receiver.example.com/hooks?x=1', false)).toBeUndefined();
    expect(webhookUrlProblem('http://receiver.example.com/', false)).toBe('url must use https');
    expect(webhookUrlProblem('http://127.0.0.1:8080/', true)).toBeUndefined();
  });

  it('says why a URL is refused', () => {
    expect(webhookUrlProblem('not a url', true)).toMatch(/^url must be an absolute URL/);
    expect(webhookUrlProblem('/relative', true)).toMatch(/^url must be an absolute URL/);
    expect(webhookUrlProblem('ftp://example.com/', true)).toBe('url must use https or http');
    expect(webhookUrlProblem('file:///etc/passwd', false)).toBe('url must use https');
    expect(webhookUrlProblem('https://user:pw@example.com/', false)).toBe(
      'url must not contain a user name or password',
    );
    expect(webhookUrlProblem('https://example.com/#x', false)).toMatch(/fragment/);
  });
});
