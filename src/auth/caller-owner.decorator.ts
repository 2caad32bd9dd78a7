import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

/** What the bearer strategy puts on the request once a token checks out. */
export interface AuthenticatedCaller {
  owner: string;
  /**
   * The scopes of an identity provider's access token, when scopes are
   * required; absent for opaque tokens, which may do all their owner may.
   */
  scopes?: ReadonlySet<string>;
}

/** The owner of the token the request was made with. */
export const CallerOwner = createParamDecorator(
  (_: unknown, context: ExecutionContext): string =>
    context.switchToHttp().getRequest<{ user: AuthenticatedCaller }>().user.owner,
);
