import type { ConfigService } from '@nestjs/config';
import { isIdentityProviderUrl, type JwtVariables } from './jwt.variables.js';
import { JwtVerifier } from './jwt-verifier.js';

/** The verifier of the identity provider's access tokens, or null without AUTH_JWT_ISSUER. */
export function jwtVerifierFrom(config: ConfigService<JwtVariables, true>): JwtVerifier | null {
  const issuer = config.get('AUTH_JWT_ISSUER', { infer: true });
  if (!issuer) return null;
  return new JwtVerifier({
    issuer,
    audience: config.get('AUTH_JWT_AUDIENCE', { infer: true }),
    jwksUri: config.get('AUTH_JWT_JWKS_URI', { infer: true }),
    ownerClaim: config.get('AUTH_JWT_OWNER_CLAIM', { infer: true }),
    algorithms: config.get('AUTH_JWT_ALGORITHMS', { infer: true }),
    clockToleranceS: config.get('AUTH_JWT_CLOCK_TOLERANCE_S', { infer: true }),
    requireScopes: config.get('AUTH_JWT_REQUIRE_SCOPES', { infer: true }),
    jwksCooldownMs: config.get('AUTH_JWT_JWKS_COOLDOWN_MS', { infer: true }),
    jwksRefreshMs: config.get('AUTH_JWT_JWKS_REFRESH_MS', { infer: true }),
    // A discovered jwks_uri is held to the rule AUTH_JWT_JWKS_URI is checked against.
    isAllowedUrl: isIdentityProviderUrl,
  });
}
