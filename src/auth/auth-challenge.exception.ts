import { ForbiddenException, UnauthorizedException } from '@nestjs/common';
import type { WithResponseHeaders } from '../errors/response-headers.js';

export const REALM = 'plants';

/**
 * A 401 that tells the client how to authenticate (RFC 6750 section 3); an
 * invalid access token says which check failed in error_description (a fixed
 * text, never the token).
 */
export class AuthChallengeException extends UnauthorizedException implements WithResponseHeaders {
  constructor(
    message: string,
    private readonly bearerError?: 'invalid_token',
    private readonly describe = false,
  ) {
    super(message);
  }

  responseHeaders(): Record<string, string> {
    const error = this.bearerError ? `, error="${this.bearerError}"` : '';
    const description = this.describe ? `, error_description="${this.message}"` : '';
    return { 'WWW-Authenticate': `Bearer realm="${REALM}"${error}${description}` };
  }
}

/** A 403 for an access token without the scope the operation needs (RFC 6750 section 3.1). */
export class InsufficientScopeException extends ForbiddenException implements WithResponseHeaders {
  constructor(private readonly scope: string) {
    super(`the access token lacks the scope this operation needs: ${scope}`);
  }

  responseHeaders(): Record<string, string> {
    return {
      'WWW-Authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${this.scope}"`,
    };
  }
}
