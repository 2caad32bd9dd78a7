import { isIP } from 'node:net';
import {
  BooleanVariable,
  IntVariable,
  ListVariable,
  OptionalVariable,
  PatternVariable,
  RequiredWithVariable,
  shown,
  variableRule,
} from '../config/environment.decorators.js';
import { Variable } from '../config/variable-metadata.js';

/** Asymmetric JWS algorithms an access token may be signed with: never `none`, never HMAC. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An identity provider's URL: https, or http on a loopback address (local providers, tests). */
export function isIdentityProviderUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (
    url.protocol === 'https:' ||
    (url.protocol === 'http:' &&
      (LOOPBACK_HOSTS.has(url.hostname) ||
        (isIP(url.hostname) === 4 && url.hostname.startsWith('127.'))))
  );
}

const IdentityProviderUrlVariable = (): PropertyDecorator =>
  variableRule(
    { type: 'URL', allowed: 'an https:// URL (http:// only on a loopback address)' },
    (value, args) =>
      isIdentityProviderUrl(value) ? undefined : `${shown(args)} is not an allowed URL`,
  );

/**
 * OpenID Connect: the issuer whose access tokens are accepted beside opaque tokens, and how they
 * are checked. One part of the service's Environment (src/environment.ts).
 */
export class JwtVariables {
  @Variable(
    'OpenID Connect',
    'An OpenID Connect issuer: when set, bearer credentials that are JWTs are its access ' +
      'tokens, beside opaque tokens.',
  )
  @OptionalVariable()
  @IdentityProviderUrlVariable()
  AUTH_JWT_ISSUER?: string = undefined;

  @Variable('OpenID Connect', 'The audience an access token must name in `aud`.')
  @RequiredWithVariable('AUTH_JWT_ISSUER')
  AUTH_JWT_AUDIENCE?: string = undefined;

  @Variable(
    'OpenID Connect',
    "The issuer's key set; unset: the `jwks_uri` of its `/.well-known/openid-configuration`.",
  )
  @OptionalVariable()
  @IdentityProviderUrlVariable()
  AUTH_JWT_JWKS_URI?: string = undefined;

  @Variable(
    'OpenID Connect',
    'The claim that names the owner; owners are namespaced (`jwt:<issuer tag>:<claim>`) so that ' +
      'they never merge with token owners (docs/DECISIONS.md).',
  )
  @PatternVariable(
    'string',
    /^[A-Za-z0-9_:.-]{1,64}$/,
    'a claim name: 1 to 64 characters of A-Z a-z 0-9 _ : . -',
  )
  AUTH_JWT_OWNER_CLAIM = 'sub';

  @Variable('OpenID Connect', 'Algorithms an access token may be signed with.')
  @ListVariable(`a comma-separated list of ${JWT_ALGORITHMS.join(', ')}`, (algorithm) =>
    (JWT_ALGORITHMS as readonly string[]).includes(algorithm),
  )
  AUTH_JWT_ALGORITHMS: string[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];

  @Variable('OpenID Connect', 'Seconds of clock skew allowed on `exp` and `nbf`.')
  @IntVariable(0, 300)
  AUTH_JWT_CLOCK_TOLERANCE_S = 30;

  @Variable(
    'OpenID Connect',
    'When true, a JWT caller needs its scopes: `plants:read` to list and get plants, ' +
      '`plants:write` to create and delete them, `webhooks:manage` for /webhooks ' +
      "(an opaque token's own scopes are checked whatever this says).",
  )
  @BooleanVariable()
  AUTH_JWT_REQUIRE_SCOPES = false;

  @Variable(
    'OpenID Connect',
    "Least time between two fetches of the issuer's keys (an unknown key id asks for one; a " +
      'failed one is retried no sooner either).',
  )
  @IntVariable(0, 3_600_000)
  AUTH_JWT_JWKS_COOLDOWN_MS = 10_000;

  @Variable(
    'OpenID Connect',
    "How often the issuer's keys are fetched again (not within the cooldown of another fetch): " +
      'a key the issuer drops stops verifying, cached tokens included.',
  )
  @IntVariable(1000, 86_400_000)
  AUTH_JWT_JWKS_REFRESH_MS = 600_000;
}
