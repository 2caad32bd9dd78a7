import { HttpException, HttpStatus } from '@nestjs/common';
import type { WithResponseHeaders } from '../errors/response-headers.js';

/** A 429 that says when to come back. */
export class TooManyRequestsException extends HttpException implements WithResponseHeaders {
  constructor(
    message: string,
    private readonly retryAfterSeconds: number,
  ) {
    super(message, HttpStatus.TOO_MANY_REQUESTS);
  }

  responseHeaders(): Record<string, string> {
    return { 'Retry-After': String(Math.max(1, Math.ceil(this.retryAfterSeconds))) };
  }
}
