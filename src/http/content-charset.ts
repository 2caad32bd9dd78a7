import { UnsupportedMediaTypeException } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { announcesBody } from './content-encoding.js';

export const NOT_UTF8 =
  'the body must be JSON in UTF-8: send Content-Type: application/json with charset=utf-8 or no charset';

/** The labels of UTF-8 (WHATWG Encoding: `utf8` is one of its labels too). */
const UTF8_LABELS = new Set(['utf-8', 'utf8']);

/** A parameter value as a token or an RFC 9110 quoted-string, unquoted and lower-cased. */
function parameterValue(raw: string): string {
  const value = raw.trim();
  const unquoted =
    value.length >= 2 && value.startsWith('"') && value.endsWith('"')
      ? value.slice(1, -1).replace(/\\(.)/g, '$1')
      : value;
  return unquoted.toLowerCase();
}

/**
 * The service reads every JSON body as UTF-8 (RFC 8259 section 8.1): a body
 * announced in another charset (`application/json; charset=utf-16`, latin1,
 * any but utf-8, in any case, quoted or not) would be misread, or refused
 * with a message about bytes the client never meant. It is a 415 that says to
 * send UTF-8; undefined when the body may be read (utf-8, no charset, or a
 * media type other than JSON, which the parser refuses on its own).
 */
export function unsupportedCharset(
  request: FastifyRequest,
): UnsupportedMediaTypeException | undefined {
  const contentType = request.headers['content-type'];
  if (contentType === undefined || !announcesBody(request)) return undefined;
  const [mediaType, ...parameters] = contentType.split(';');
  if (mediaType.trim().toLowerCase() !== 'application/json') return undefined;
  for (const parameter of parameters) {
    const equals = parameter.indexOf('=');
    if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue;
    if (!UTF8_LABELS.has(parameterValue(parameter.slice(equals + 1)))) {
      return new UnsupportedMediaTypeException(NOT_UTF8);
    }
  }
  return undefined;
}
