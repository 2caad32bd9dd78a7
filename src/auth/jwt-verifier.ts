import { hash } from 'node:crypto';
import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { errors, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { AuthChallengeException } from './auth-challenge.exception.js';
import type { AuthenticatedCaller } from './caller-owner.decorator.js';
import { IssuerKeys } from './issuer-keys.js';
import { hashToken } from './token-format.js';

export interface JwtSettings {
  issuer: string;
  audience: string;
  jwksUri?: string;
  ownerClaim: string;
  algorithms: string[];
  clockToleranceS: number;
  requireScopes: boolean;
  jwksCooldownMs: number;
  /** How often the issuer's keys are fetched again, so that a key it drops stops verifying. */
  jwksRefreshMs: number;
  isAllowedUrl: (url: string) => boolean;
}

/** Longer credentials are refused before any parsing: access tokens are a few kilobytes. */
const MAX_JWT_LENGTH = 8192;
/** Verified tokens remembered until their expiry, at most this many (least recently used go first). */
const MAX_CACHED_TOKENS = 10_000;
/** How long a verified token is answered from the cache at most. */
const MAX_CACHED_TOKEN_MS = 5 * 60_000;
/** `jwt:` + issuer tag + `:` + claim fits the 64 characters of an owner. */
const MAX_CLAIM_LENGTH = 49;
const USABLE_CLAIM = /^[\x21-\x7e]+$/;

/** A verified token, and the key that verified it: it is answered while that key is listed. */
interface CachedCaller {
  caller: AuthenticatedCaller;
  kid: string | undefined;
  generation: number;
  /** Epoch milliseconds after which the token is verified again. */
  until: number;
}

/** Three base64url-looking parts: an opaque token (pst_…) has no dot. */
export const looksLikeJwt = (token: string): boolean => token.split('.').length === 3;

/**
 * Verifies an identity provider's access tokens (OpenID Connect, JWS):
 * signature against the issuer's keys, an allowlisted asymmetric algorithm,
 * `iss`, `aud`, `exp` and `nbf` with a clock tolerance. The owner is the
 * configured claim namespaced by issuer, `jwt:<issuer tag>:<claim>`, which no
 * opaque-token owner can be (their names have no `:`), and which a subject of
 * another issuer cannot become either. A verified token is remembered until
 * it expires (five minutes at most, and only while the issuer still lists the
 * key that signed it), so that a repeated request costs a hash and a map lookup.
 */
export class JwtVerifier implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Auth');
  private readonly verified = new LRUCache<string, CachedCaller>({ max: MAX_CACHED_TOKENS });
  private readonly ownerPrefix: string;

  constructor(
    private readonly settings: JwtSettings,
    private readonly keys = new IssuerKeys({
      issuer: settings.issuer,
      jwksUri: settings.jwksUri,
      cooldownMs: settings.jwksCooldownMs,
      isAllowedUrl: settings.isAllowedUrl,
    }),
    /** Epoch milliseconds; tests move it to expire cache entries. */
    private readonly now: () => number = Date.now,
  ) {
    this.ownerPrefix = `jwt:${hash('sha256', settings.issuer, 'base64url').slice(0, 10)}:`;
  }

  /** Fetches the keys at start-up without waiting for them: the service starts with the issuer down. */
  onApplicationBootstrap(): void {
    this.keys
      .refetch()
      .catch(() =>
        this.logger.warn(
          `The identity provider's signing keys could not be fetched at start-up (${describeCause(this.keys.lastError)}); ` +
            'JWT callers get 503 until they can be.',
        ),
      );
    this.keys.startRefreshing(this.settings.jwksRefreshMs, () =>
      this.logger.warn(
        `The identity provider's signing keys could not be refreshed (${describeCause(this.keys.lastError)}); ` +
          'the last keys fetched stay in use.',
      ),
    );
  }

  onModuleDestroy(): void {
    this.keys.stopRefreshing();
  }

  /** The caller a valid access token stands for; a challenge saying which check failed otherwise. */
  async verify(token: string): Promise<AuthenticatedCaller> {
    const key = hashToken(token);
    const cached = this.verified.get(key);
    if (cached) {
      if (cached.until > this.now() && this.keys.stillLists(cached.kid, cached.generation)) {
        return cached.caller;
      }
      this.verified.delete(key);
    }
    if (token.length > MAX_JWT_LENGTH) throw invalid('the access token is too long');
    let payload: JWTPayload;
    let kid: string | undefined;
    try {
      ({
        payload,
        protectedHeader: { kid },
      } = await jwtVerify(token, this.keys.resolve, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        algorithms: this.settings.algorithms,
        clockTolerance: this.settings.clockToleranceS,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      if (error instanceof errors.JOSEError || error instanceof TypeError) {
        throw invalid(whichCheckFailed(error));
      }
      throw error;
    }
    // jose checks iat only with maxTokenAge, which this service does not limit.
    if (
      payload.iat !== undefined &&
      payload.iat > Date.now() / 1000 + this.settings.clockToleranceS
    ) {
      throw invalid('the access token is issued in the future');
    }
    // RFC 7519 section 4.1.2: a string (a number would read as the owner "42").
    if (payload.sub !== undefined && typeof payload.sub !== 'string') {
      throw invalid("the access token's sub claim is not a string");
    }
    const caller: AuthenticatedCaller = { owner: this.ownerOf(payload) };
    if (this.settings.requireScopes) caller.scopes = scopesOf(payload);
    // Until exp, but a few minutes at most: a token stays accepted from the
    // cache no longer than that after its issuer dropped the key that signed it.
    const now = this.now();
    const ttl = Math.min(payload.exp! * 1000 - now, MAX_CACHED_TOKEN_MS);
    if (ttl > 0) {
      const generation = this.keys.currentGeneration;
      const entry = { caller, kid: typeof kid === 'string' ? kid : undefined, generation };
      this.verified.set(key, { ...entry, until: now + ttl }, { ttl });
    }
    return caller;
  }

  private ownerOf(payload: JWTPayload): string {
    const claim = payload[this.settings.ownerClaim];
    const value = typeof claim === 'number' ? String(claim) : claim;
    if (typeof value !== 'string' || value.length > MAX_CLAIM_LENGTH || !USABLE_CLAIM.test(value)) {
      throw invalid(
        `the access token's ${this.settings.ownerClaim} claim is missing or not a name of at most ${MAX_CLAIM_LENGTH} printable characters`,
      );
    }
    return this.ownerPrefix + value;
  }
}

function invalid(description: string): AuthChallengeException {
  return new AuthChallengeException(description, 'invalid_token', true);
}

/** The check that failed, in fixed words: jose's messages may quote the token's claims. */
function whichCheckFailed(error: Error): string {
  if (error instanceof errors.JWTExpired) return 'the access token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'nbf':
        return 'the access token is not yet valid';
      case 'iat':
        return error.reason === 'invalid'
          ? "the access token's iat claim is not a number"
          : 'the access token is issued in the future';
      case 'iss':
        return 'the access token is from another issuer';
      case 'aud':
        return 'the access token is meant for another audience';
      case 'exp':
        return 'the access token has no valid expiry';
      default:
        return 'the access token has an invalid claim';
    }
  }
  // jose's fixed text for a `crit` header parameter it does not understand (RFC 7515 section 4.1.11).
  if (error instanceof errors.JOSENotSupported && error.message.startsWith('Extension Header')) {
    return 'the access token has a critical header parameter that is not understood';
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return 'the access token is signed with an algorithm that is not allowed';
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return 'the access token signature does not verify';
  }
  if (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return 'the access token signature does not verify: no key of the issuer matches its key id';
  }
  return 'the access token is malformed';
}

/** `scope` (a space-separated string, RFC 9068) or `scp` (an array, as some providers send). */
function scopesOf(payload: JWTPayload): ReadonlySet<string> {
  const { scope, scp } = payload as { scope?: unknown; scp?: unknown };
  const scopes = new Set<string>();
  if (typeof scope === 'string') for (const item of scope.split(' ')) if (item) scopes.add(item);
  if (typeof scp === 'string') for (const item of scp.split(' ')) if (item) scopes.add(item);
  if (Array.isArray(scp)) for (const item of scp) if (typeof item === 'string') scopes.add(item);
  return scopes;
}

function describeCause(error: unknown): string {
  return error instanceof Error ? error.message : 'unknown cause';
}
