import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { unsupportedCharset } from './content-charset.js';

const requestWith = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;
const withBody = (contentType: string) =>
  unsupportedCharset(requestWith({ 'content-type': contentType, 'content-length': '10' }));

describe('unsupportedCharset', () => {
  it.each([
    'application/json; charset=utf-16',
    'application/json;charset=UTF-16LE',
    'application/json; charset=latin1',
    'application/json; charset=ISO-8859-1',
    'Application/JSON; Charset="utf-16"',
    'application/json; charset="us-ascii"',
    'application/json; charset=',
    'application/json; foo=bar; charset=windows-1252',
    'application/json; charset=utf-8; charset=utf-16',
  ])('refuses a body sent as %s with a 415 that says to send UTF-8', (contentType) => {
    const refusal = withBody(contentType);
    expect(refusal?.getStatus()).toBe(415);
    expect(refusal?.message).toMatch(/UTF-8.*charset=utf-8 or no charset/);
  });

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json; charset="utf-8"',
    'application/json; charset="UTF\\-8"',
    'application/json; charset=utf8',
    'application/json; foo=bar',
    'text/plain; charset=latin1',
  ])('leaves %s to the parser', (contentType) => {
    expect(withBody(contentType)).toBeUndefined();
  });

  it('ignores the header on a request without a body', () => {
    expect(
      unsupportedCharset(requestWith({ 'content-type': 'application/json; charset=utf-16' })),
    ).toBeUndefined();
  });
});
