import { SetMetadata } from '@nestjs/common';

export const REQUIRED_SCOPE = 'plant-store:required-scope';

export type Scope = 'plants:read' | 'plants:write' | 'webhooks:manage';

/**
 * The scope an identity provider's access token needs for this route when
 * AUTH_JWT_REQUIRE_SCOPES is on. Opaque tokens carry no scopes: they may do
 * everything their owner may.
 */
export const RequiredScope = (scope: Scope): MethodDecorator & ClassDecorator =>
  SetMetadata(REQUIRED_SCOPE, scope);
