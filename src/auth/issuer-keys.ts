import { ServiceUnavailableException } from '@nestjs/common';
import {
  createLocalJWKSet,
  errors,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  type LocalJWKSet,
} from 'jose';
import type { WithResponseHeaders } from '../errors/response-headers.js';

/** A 503 for a JWT caller while the issuer's keys cannot be had; opaque tokens never see it. */
export class IssuerUnavailableException
  extends ServiceUnavailableException
  implements WithResponseHeaders
{
  constructor(private readonly retryAfterSeconds: number) {
    super(
      "the identity provider's signing keys cannot be fetched: retry after the number of seconds in Retry-After",
    );
  }

  responseHeaders(): Record<string, string> {
    return { 'Retry-After': String(Math.max(1, Math.ceil(this.retryAfterSeconds))) };
  }
}

export interface IssuerKeysOptions {
  issuer: string;
  /** Without it, the jwks_uri of the issuer's discovery document. */
  jwksUri?: string;
  /** Least time between two fetches, successful or not. */
  cooldownMs: number;
  /** Checks a discovered jwks_uri as AUTH_JWT_JWKS_URI is checked at start-up. */
  isAllowedUrl: (url: string) => boolean;
  fetchTimeoutMs?: number;
  /** Stands in for the global fetch in unit tests. */
  fetch?: typeof fetch;
}

/** Larger discovery documents or key sets are refused: a key set is a few kilobytes. */
const MAX_DOCUMENT_BYTES = 512 * 1024;

/**
 * The issuer's signing keys: discovered once, cached, and fetched again when
 * a token names a key id the cache does not know (key rotation without a
 * restart), and periodically (so a key the issuer drops stops verifying).
 * Fetches are at most one per cooldown, however many requests ask,
 * so tokens with made-up key ids cannot turn the service against the issuer.
 */
export class IssuerKeys {
  private keys: LocalJWKSet | null = null;
  /** The key ids of the current key set. */
  private kids: ReadonlySet<string> = new Set();
  /** Counts successful fetches: a token verified by a key without a key id is tied to its key set. */
  private generation = 0;
  private refreshTimer: NodeJS.Timeout | null = null;
  private jwksUri: string | undefined;
  private lastAttempt = -Infinity;
  private lastFailed = false;
  private inFlight: Promise<void> | null = null;
  /** Why the last fetch failed, for the log (never holds a token). */
  lastError: unknown = null;

  constructor(private readonly options: IssuerKeysOptions) {
    this.jwksUri = options.jwksUri;
  }

  /** jose's key resolver: a cached key, or one refetch when none fits. */
  readonly resolve = async (
    header: JWSHeaderParameters,
    token: FlattenedJWSInput,
  ): ReturnType<LocalJWKSet> => {
    if (this.keys) {
      try {
        return await this.keys(header, token);
      } catch (error) {
        if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      }
    }
    // Within the cooldown of a successful fetch, an unknown key id is the token's fault.
    if ((await this.refetch()) === 'cooling') throw new errors.JWKSNoMatchingKey();
    return this.keys!(header, token);
  };

  /** The current key set still holds the key that verified a token of this kid (at that generation, without one). */
  stillLists(kid: string | undefined, generation: number): boolean {
    return kid === undefined ? generation === this.generation : this.kids.has(kid);
  }

  get currentGeneration(): number {
    return this.generation;
  }

  /**
   * Fetches the keys every `everyMs` (skipped within the cooldown of another
   * fetch). A failed refresh keeps the last good keys and is reported to
   * `onFailure`. The timer does not keep the process alive.
   */
  startRefreshing(everyMs: number, onFailure: () => void): void {
    this.stopRefreshing();
    this.refreshTimer = setInterval(() => {
      this.refetch().catch(onFailure);
    }, everyMs);
    this.refreshTimer.unref();
  }

  stopRefreshing(): void {
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    this.refreshTimer = null;
  }

  /**
   * Fetches the keys, or joins the fetch under way; 'cooling' when the last
   * one succeeded within the cooldown. A 503 when the issuer cannot be reached
   * (now, or at the last attempt within the cooldown).
   */
  async refetch(): Promise<'fetched' | 'cooling'> {
    if (!this.inFlight) {
      if (performance.now() - this.lastAttempt < this.options.cooldownMs) {
        if (this.lastFailed || !this.keys) throw this.unavailable();
        return 'cooling';
      }
      this.lastAttempt = performance.now();
      this.inFlight = this.load()
        .then(
          ({ keys, kids }) => {
            this.keys = keys;
            this.kids = kids;
            this.generation += 1;
            this.lastFailed = false;
          },
          (error: unknown) => {
            this.lastFailed = true;
            this.lastError = error;
          },
        )
        .finally(() => (this.inFlight = null));
    }
    await this.inFlight;
    if (this.lastFailed) throw this.unavailable();
    return 'fetched';
  }

  private unavailable(): IssuerUnavailableException {
    const left = this.lastAttempt + this.options.cooldownMs - performance.now();
    return new IssuerUnavailableException(Math.max(1, left / 1000));
  }

  private async load(): Promise<{ keys: LocalJWKSet; kids: ReadonlySet<string> }> {
    if (!this.jwksUri) {
      const discoveryUrl = `${this.options.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
      const discovery = (await this.getJson(discoveryUrl)) as {
        issuer?: unknown;
        jwks_uri?: unknown;
      };
      if (discovery.issuer !== this.options.issuer) {
        throw new Error('the discovery document names another issuer');
      }
      if (
        typeof discovery.jwks_uri !== 'string' ||
        !this.options.isAllowedUrl(discovery.jwks_uri)
      ) {
        throw new Error('the discovery document has no acceptable jwks_uri');
      }
      this.jwksUri = discovery.jwks_uri;
    }
    const set = (await this.getJson(this.jwksUri)) as JSONWebKeySet;
    // createLocalJWKSet refuses a document that is not a key set, before keys are read from it.
    const keys = createLocalJWKSet(set);
    const kids = new Set(set.keys.flatMap((key) => (typeof key.kid === 'string' ? [key.kid] : [])));
    return { keys, kids };
  }

  private async getJson(url: string): Promise<unknown> {
    const response = await (this.options.fetch ?? fetch)(url, {
      redirect: 'error',
      signal: AbortSignal.timeout(this.options.fetchTimeoutMs ?? 5000),
      headers: { accept: 'application/json' },
    });
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    const body = await response.arrayBuffer();
    if (body.byteLength > MAX_DOCUMENT_BYTES)
      throw new Error(`${url} answered too large a document`);
    return JSON.parse(new TextDecoder().decode(body)) as unknown;
  }
}
