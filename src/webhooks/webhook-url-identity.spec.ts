import { describe, expect, it } from 'vitest';
import { webhookUrlIdentity } from './webhook-url-identity.js';

describe('webhookUrlIdentity', () => {
  it.each([
    ['an escaped unreserved character', 'https://r.example.com/x', 'https://r.example.com/%78'],
    [
      'escaped unreserved characters in a query',
      'https://r.example.com/?q=~a',
      'https://r.example.com/?q=%7e%61',
    ],
    ['an empty query', 'https://r.example.com/x', 'https://r.example.com/x?'],
    ['an IPv4-mapped address', 'https://127.0.0.1/x', 'https://[::ffff:127.0.0.1]/x'],
    ['an IPv4-mapped address in hex', 'https://8.8.8.8:8443/', 'https://[::FFFF:808:808]:8443/'],
    ['the host in another case', 'https://r.example.com/a', 'HTTPS://R.Example.COM/a'],
    ['an escaped host', 'https://r.example.com/a', 'https://%72.example.com/a'],
    ['the default port', 'https://r.example.com/a', 'https://r.example.com:443/a'],
    ['the default port of http', 'http://r.example.com/a', 'http://r.example.com:80/a'],
    [
      'the case of an escape',
      'https://r.example.com/a%2Fb?c=%3D',
      'https://r.example.com/a%2fb?c=%3d',
    ],
    ['dot segments', 'https://r.example.com/a/c', 'https://r.example.com/a/./b/../c'],
    ['escaped dot segments', 'https://r.example.com/a/c', 'https://r.example.com/a/b/%2E%2e/c'],
    ['an empty path', 'https://r.example.com/', 'https://r.example.com'],
    [
      'a character no URI holds unescaped',
      'https://r.example.com/?q=%7C%7B',
      'https://r.example.com/?q=|{',
    ],
  ])('takes %s as the same URL', (_, one, other) => {
    expect(webhookUrlIdentity(other)).toBe(webhookUrlIdentity(one));
  });

  it.each([
    [
      'a reserved character and its escape',
      'https://r.example.com/a/b',
      'https://r.example.com/a%2Fb',
    ],
    ['a letter case in the path', 'https://r.example.com/x', 'https://r.example.com/X'],
    ['another parameter order', 'https://r.example.com/?a=1&b=2', 'https://r.example.com/?b=2&a=1'],
    ['another port', 'https://r.example.com/', 'https://r.example.com:8443/'],
    ['another scheme', 'https://r.example.com/', 'http://r.example.com/'],
    ['an IPv6 address that is not mapped', 'https://[2001:db8::1]/', 'https://[::ffff:0:7f00:1]/'],
    ['a query that is not empty', 'https://r.example.com/x', 'https://r.example.com/x?q'],
  ])('keeps URLs apart that differ by %s', (_, one, other) => {
    expect(webhookUrlIdentity(other)).not.toBe(webhookUrlIdentity(one));
  });

  it('keeps a stray % as it is', () => {
    expect(webhookUrlIdentity('https://r.example.com/a%2')).toBe('https://r.example.com/a%2');
  });
});
