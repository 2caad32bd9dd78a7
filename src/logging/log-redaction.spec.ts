import { describe, expect, it } from 'vitest';
import { redactUrl } from './log-redaction.js';
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
