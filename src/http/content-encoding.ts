import { UnsupportedMediaTypeException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

export const NOT_IDENTITY =
  'Content-Encoding is not supported: send the body uncompressed (identity)';

/** Whether the request head announces a body (a length above 0, or chunks). */
export function announcesBody(request: FastifyRequest): boolean {
  return (
    request.headers['transfer-encoding'] !== undefined ||
    Number(request.headers['content-length'] ?? 0) > 0
  );
}

/**
 * The service decodes no content coding: a body sent with `Content-Encoding:
 * gzip` (or any coding but identity) would be read as if it were plain JSON
 * and refused as "not valid UTF-8". It is a 415 that names what to do
 * instead (RFC 9110 section 15.5.16); undefined when the body may be read.
 */
export function unsupportedContentEncoding(
  request: FastifyRequest,
): UnsupportedMediaTypeException | undefined {
  const coding = request.headers['content-encoding'];
  if (coding === undefined || !announcesBody(request)) return undefined;
  const codings = coding
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');
  if (codings.every((part) => part === 'identity')) return undefined;
  return new UnsupportedMediaTypeException(NOT_IDENTITY);
}
