import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { httpRequestOf } from '../http/http-arguments.js';

/** What the bearer strategy puts on the request once a token checks out. */
export interface AuthenticatedCaller {
  owner: string;
  /**
   * The scopes the token holds: an opaque token's always, an identity
   * provider's access token's when scopes are required (absent otherwise:
   * it may do all its owner may).
   */
  scopes?: ReadonlySet<string>;
}

/** The owner of the token the request was made with. */
export const CallerOwner = createParamDecorator(
  (_: unknown, context: ExecutionContext): string =>
    httpRequestOf<{ user: AuthenticatedCaller }>(context).user.owner,
);
