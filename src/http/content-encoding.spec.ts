import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { announcesBody, unsupportedContentEncoding } from './content-encoding.js';

const requestWith = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;

describe('unsupportedContentEncoding', () => {
  it.each(['gzip', 'br', 'deflate', 'GZIP', 'identity, gzip', 'x-custom'])(
    'refuses a body in %s with a 415',
    (coding) => {
      const refusal = unsupportedContentEncoding(
        requestWith({ 'content-encoding': coding, 'content-length': '10' }),
      );
      expect(refusal?.getStatus()).toBe(415);
      expect(refusal?.message).toMatch(/Content-Encoding is not supported/);
    },
  );

  it.each(['identity', 'Identity', ' identity ', ''])('takes a body in "%s"', (coding) => {
    expect(
      unsupportedContentEncoding(
        requestWith({ 'content-encoding': coding, 'transfer-encoding': 'chunked' }),
      ),
    ).toBeUndefined();
  });

  it('ignores the header on a request without a body', () => {
    expect(unsupportedContentEncoding(requestWith({ 'content-encoding': 'gzip' }))).toBeUndefined();
    expect(announcesBody(requestWith({ 'content-length': '0' }))).toBe(false);
  });
});
