import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { redactTokens } from '../logging/log-redaction.js';
import { loggedUrl } from '../logging/logged-url.js';
import { toErrorResponse } from './error-response.js';
import { ErrorDto } from './error.dto.js';

const logger = new Logger('HttpError');

/**
 * Some messages quote the URL (Nest's "Cannot GET /x?..." for an unknown
 * route, Fastify's "'/x?...' is not a valid url component"). A query string
 * may carry a token (?access_token=), so an error body never repeats it.
 */
export function withoutQueryString(message: string, url: string): string {
  const queryAt = url.indexOf('?');
  if (queryAt < 0 || queryAt === url.length - 1) return message;
  const query = url.slice(queryAt);
  let decoded = query;
  try {
    decoded = decodeURIComponent(query);
  } catch {
    // Not decodable: only the raw form can have been quoted.
  }
  return message.split(query).join('').split(decoded).join('');
}

/**
 * Answers an error in the contract's shape and logs the cause of server-side
 * faults. Shared by the Nest filter below and Fastify's `frameworkErrors`
 * hook (malformed URLs, which fail before Nest sees the request).
 */
export function sendError(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, body, headers, logCause } = toErrorResponse(exception);
  // A message that quotes the path (Fastify's 414) may quote a token in it.
  const message = redactTokens(withoutQueryString(body.message, request.url));
  if (logCause) {
    const stack = exception instanceof Error ? exception.stack : String(exception);
    // The path only (a query string may carry a token, ?access_token=), redacted and cut.
    const path = loggedUrl(request.url.split('?')[0]);
    logger.error(`${request.method} ${path} -> ${status}`, stack);
  }
  if (reply.sent || reply.raw.headersSent) {
    // A streamed list failed half-way: cut the connection so that the
    // client sees a broken response, never a truncated list that looks whole.
    reply.raw.destroy();
    return;
  }
  void reply
    .status(status)
    .headers(headers)
    .header('content-type', 'application/json; charset=utf-8')
    .send(message === body.message ? body : new ErrorDto(status, message));
}

/**
 * The one exception filter (registered as APP_FILTER): every error of every
 * layer leaves the service as `{error, message}` with a JSON content type.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }
}
