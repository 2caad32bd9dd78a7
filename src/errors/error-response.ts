import { HttpException, HttpStatus } from '@nestjs/common';
import { isDatabaseUnavailable, isUniqueViolation } from '../database/database-errors.js';
import { ErrorDto } from './error.dto.js';
import { MAX_PATH_PARAMETER_LENGTH } from '../validation/int64.js';
import { hasResponseHeaders } from './response-headers.js';

export interface ErrorResponse {
  status: number;
  body: ErrorDto;
  headers: Record<string, string>;
  /** Whether the cause belongs in the log with its stack (server-side faults). */
  logCause: boolean;
}

/** Fastify's own errors (body parser, content type, limits) carry a status and a code. */
interface FastifyError {
  code: string;
  statusCode: number;
  message: string;
}

function isFastifyError(error: unknown): error is FastifyError {
  if (!(error instanceof Error)) return false;
  const { code, statusCode } = error as Partial<FastifyError>;
  return typeof code === 'string' && code.startsWith('FST_') && typeof statusCode === 'number';
}

/** The router's 414 (Fastify's maxParamLength, set in app.setup.ts). */
export const PARAMETER_TOO_LONG = `a path parameter is longer than ${MAX_PATH_PARAMETER_LENGTH} characters`;

const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported Content-Type: send the body as application/json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'request body is empty: send a JSON object',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the length of the body',
  // Fastify's own message quotes the whole path back.
  FST_ERR_MAX_PARAM_LENGTH: PARAMETER_TOO_LONG,
};

function fastifyMessage(error: FastifyError): string {
  return FASTIFY_MESSAGES[error.code] ?? error.message;
}

function httpExceptionMessage(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const { message } = response as { message?: unknown };
  if (Array.isArray(message)) return message.join('; ');
  if (typeof message === 'string') return message;
  return exception.message;
}

function response(status: number, message: string, logCause = false, headers = {}): ErrorResponse {
  return { status, body: new ErrorDto(status, message), headers, logCause };
}

/**
 * Maps anything thrown anywhere in the request pipeline to the contract's
 * `{error, message}`. Server-side faults never reveal their cause (SQL,
 * driver messages, stacks); they are flagged for the log instead.
 */
export function toErrorResponse(exception: unknown): ErrorResponse {
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const headers = hasResponseHeaders(exception) ? exception.responseHeaders() : {};
    // A 503 is thrown on purpose (not ready, shutting down) with words meant for clients.
    if (status === 503) {
      return response(status, httpExceptionMessage(exception), false, {
        'Retry-After': '1',
        ...headers,
      });
    }
    if (status >= 500) return response(status, 'internal server error', true, headers);
    // Nest's Fastify adapter wraps Fastify's own 4xx errors, keeping them as the cause.
    const cause = exception.cause;
    const message = isFastifyError(cause) ? fastifyMessage(cause) : httpExceptionMessage(exception);
    return response(status, message, false, headers);
  }
  if (isFastifyError(exception) && exception.statusCode < 500) {
    return response(exception.statusCode, fastifyMessage(exception));
  }
  if (isUniqueViolation(exception)) {
    return response(HttpStatus.CONFLICT, 'the resource already exists');
  }
  if (isDatabaseUnavailable(exception)) {
    return response(
      HttpStatus.SERVICE_UNAVAILABLE,
      'the database is unavailable; retry the request later',
      true,
      { 'Retry-After': '1' },
    );
  }
  return response(HttpStatus.INTERNAL_SERVER_ERROR, 'internal server error', true);
}
