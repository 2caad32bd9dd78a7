import { SetMetadata } from '@nestjs/common';

export const REQUIRED_SCOPE = 'plant-store:required-scope';

/** Every scope an operation can require; an opaque token holds all of them unless issued with fewer. */
export const SCOPES = ['plants:read', 'plants:write', 'webhooks:manage'] as const;

export type Scope = (typeof SCOPES)[number];

/**
 * The scope a token needs for this route: an opaque token's own scopes
 * (all unless it was issued with fewer), an identity provider's access token's
 * when AUTH_JWT_REQUIRE_SCOPES is on.
 */
export const RequiredScope = (scope: Scope): MethodDecorator & ClassDecorator =>
  SetMetadata(REQUIRED_SCOPE, scope);
