import { UnauthorizedException } from '@nestjs/common';
import type { WithResponseHeaders } from '../errors/response-headers.js';

export const REALM = 'plants';

/** A 401 that tells the client how to authenticate (RFC 6750 section 3). */
export class AuthChallengeException extends UnauthorizedException implements WithResponseHeaders {
  constructor(
    message: string,
    private readonly bearerError?: 'invalid_token',
  ) {
    super(message);
  }

  responseHeaders(): Record<string, string> {
    const error = this.bearerError ? `, error="${this.bearerError}"` : '';
    return { 'WWW-Authenticate': `Bearer realm="${REALM}"${error}` };
  }
}
