import { BadRequestException, HttpException, Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import passport from 'passport';
import {
  type Attempt,
  AUTH_FAILURE_LIMITER,
  type AuthFailureLimiter,
} from './auth-failure.limiter.js';
import { AuthChallengeException } from './auth-challenge.exception.js';
import { REFUSAL_PACER, type RefusalPacer } from './refusal-pacer.js';
import type { AuthenticatedCaller } from './caller-owner.decorator.js';
import { TooManyRequestsException } from './too-many-requests.exception.js';

/** How many Authorization headers the raw request carries (Node keeps only the first). */
function authorizationHeaderCount(request: FastifyRequest): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization') count += 1;
  }
  return count;
}

/**
 * The failure budget's answer as the check takes it: a place in the budget, nothing to hold (a
 * request without a credential, within the budget), or a 429 once the budget is spent.
 */
function admissionOf(admission: Attempt | number): Attempt | undefined {
  if (typeof admission !== 'number') return admission;
  if (admission > 0) {
    throw new TooManyRequestsException(
      'too many failed authentications from this client: retry after the number of seconds in Retry-After',
      admission,
    );
  }
  return undefined;
}

/**
 * Turns passport's verdict into the caller or the contract's 401: passport
 * reports no credential as a bare challenge, an unknown or revoked one with
 * error="invalid_token", a malformed header as status 400.
 */
export function callerFromVerdict(
  error: unknown,
  caller: AuthenticatedCaller | false | null,
  info: unknown,
  status?: unknown,
): AuthenticatedCaller {
  // A failed token lookup (e.g. the database is down) goes on to the filter as it is.
  if (error instanceof Error) throw error;
  if (error) throw new Error(`token lookup failed: ${JSON.stringify(error)}`);
  if (caller) return caller;
  if (typeof info === 'string' && info.includes('invalid_token')) {
    throw new AuthChallengeException('the bearer token is unknown or revoked', 'invalid_token');
  }
  if (status === 400) {
    throw new AuthChallengeException('the Authorization header must be "Bearer <token>"');
  }
  throw new AuthChallengeException(
    'a bearer token is required: send "Authorization: Bearer <token>"',
  );
}

/**
 * Authenticates one request: the failed-authentication budget of its client
 * address (`request.ip`, behind a proxy as TRUST_PROXY yields it), then the
 * bearer credential through passport's `bearer` strategy. It runs in the
 * pipeline's onRequest hook, before a byte of the body is read, and the
 * global guard asks it again: the answer is kept per request, so the
 * credential is checked, and a failure counted, once.
 *
 * Only a credential that was presented and is wrong counts against the
 * budget (a malformed Authorization header included): a request with none, a
 * browser or a probe, must not lock out the real clients sharing its address.
 * A credential holds its place in the budget while it is checked (admit), so
 * that wrong ones sent together cannot all pass a count none has reached yet.
 * Every refusal, with a credential or without, is paced per address
 * (RefusalPacer): past its rate, the refusal comes late.
 */
@Injectable()
export class RequestAuthenticator {
  private readonly verdicts = new WeakMap<FastifyRequest, Promise<AuthenticatedCaller>>();

  constructor(
    @Inject(AUTH_FAILURE_LIMITER) private readonly failures: AuthFailureLimiter | null,
    @Inject(REFUSAL_PACER) private readonly pacer: RefusalPacer | null,
  ) {}

  authenticate(request: FastifyRequest, reply: FastifyReply): Promise<AuthenticatedCaller> {
    let verdict = this.verdicts.get(request);
    if (!verdict) {
      verdict = this.check(request, reply);
      this.verdicts.set(request, verdict);
    }
    return verdict;
  }

  /**
   * One async function for the whole check, and the budget's admission
   * awaited only when it answers later (Redis): each async layer more is a
   * promise and a turn of the microtask queue more on every request.
   */
  private async check(request: FastifyRequest, reply: FastifyReply): Promise<AuthenticatedCaller> {
    let attempt: Attempt | undefined;
    try {
      const admitted = this.failures ? this.admission(this.failures, request) : undefined;
      attempt = admitted instanceof Promise ? await admitted : admitted;
      // Node keeps the first of several Authorization headers; which one a proxy
      // on the way believes is anyone's guess, so neither is.
      if (authorizationHeaderCount(request) > 1) {
        throw new BadRequestException('send one Authorization header, not several');
      }
      const caller = await this.passportVerdict(request, reply);
      attempt?.release();
      return caller;
    } catch (error) {
      if (error instanceof AuthChallengeException) await attempt?.fail();
      else attempt?.release();
      // A refusal (4xx), not a failure of the service (a database down: 503).
      if (this.pacer && error instanceof HttpException && error.getStatus() < 500) {
        await this.pacer.pace(request.ip);
      }
      throw error;
    }
  }

  /**
   * The failure budget's word on a request: a 429 once its address has spent
   * the budget; else, for a credential presented (the only kind that can
   * fail), its place in the budget until the credential is checked.
   */
  private admission(
    failures: AuthFailureLimiter,
    request: FastifyRequest,
  ): Attempt | undefined | Promise<Attempt | undefined> {
    const pending =
      request.headers.authorization === undefined
        ? failures.retryAfter(request.ip)
        : failures.admit(request.ip);
    // The in-memory limiter answers at once; a promise only from Redis.
    return pending instanceof Promise ? pending.then(admissionOf) : admissionOf(pending);
  }

  /** passport's `bearer` strategy (BearerStrategy), called as @nestjs/passport's AuthGuard calls it. */
  private passportVerdict(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<AuthenticatedCaller> {
    return new Promise((resolve, reject) => {
      const authenticate = passport.authenticate(
        'bearer',
        { session: false },
        (error: unknown, caller: AuthenticatedCaller | false, info: unknown, status?: unknown) => {
          try {
            resolve(callerFromVerdict(error, caller, info, status));
          } catch (failure) {
            reject(failure instanceof Error ? failure : new Error(String(failure)));
          }
        },
      ) as (request: unknown, response: unknown, next: (error?: unknown) => void) => void;
      authenticate(request, reply, (error) => {
        reject(error instanceof Error ? error : new Error(`passport failed: ${String(error)}`));
      });
    });
  }
}
