import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import { httpReplyOf, httpRequestOf } from '../http/http-arguments.js';
import { PerRoute } from '../http/per-route.js';
import { MemoryThrottlerStorage } from './memory-throttler.storage.js';
import type { StorageRecord } from './storage-record.js';

/**
 * The route metadata keys of @nestjs/throttler 6.7 (its throttler.constants, which the package
 * does not export), each followed by a throttler's name: `@SkipThrottle()` writes the first,
 * `@Throttle()` the others. throttler-options.spec.ts pins them through the library's decorators.
 */
const SKIP_KEY = 'THROTTLER:SKIP';
const THROTTLE_KEYS = [
  'THROTTLER:LIMIT',
  'THROTTLER:TTL',
  'THROTTLER:BLOCK_DURATION',
  'THROTTLER:TRACKER',
  'THROTTLER:KEY_GENERATOR',
];

/** The one quota a route's requests count against, with the names of the headers that tell it. */
interface Quota {
  name: string;
  limit: number;
  ttl: number;
  blockDuration: number;
  headers: { limit: string; remaining: string; reset: string; retryAfter: string };
}

/** A route that `@SkipThrottle()` takes out of the quota. */
const SKIPPED = 'skipped';
/** A route that the library's own canActivate answers (see quotaOf). */
const LIBRARY = 'library';

/**
 * @nestjs/throttler's ThrottlerGuard, its canActivate (6.7.1) taken apart once per route
 * instead of on every request.
 *
 * The library's canActivate reads six metadata keys from the handler and its class and awaits
 * five values on every request (whether the route is skipped, its limit, window, block time,
 * then the count), for settings that are fixed once the route's class is defined. Those awaits
 * are promise reactions, each a turn of the microtask queue: the library's guard cost 5 to 6 %
 * of a list's instructions, this one about 2 (BENCHMARKS.md, "Instructions per request").
 *
 * So each route is looked at once (PerRoute): a `@SkipThrottle()` route passes; a route with
 * the module's one throttler and nothing of `@Throttle()` counts its request at once, through
 * the same storage, tracker, key and headers as the library's guard, answered synchronously
 * when the storage is this instance's memory; anything else (several throttlers, a `@Throttle()`
 * on the route, a setting given as a function, `skipIf`, `ignoreUserAgents`, no headers) goes to
 * the library's canActivate, as before.
 */
class QuotaGuard extends ThrottlerGuard {
  private readonly quotas = new PerRoute((handler, classRef) => this.quotaOf(handler, classRef));
  private readonly memory: MemoryThrottlerStorage | undefined;

  constructor(options: ThrottlerModuleOptions, storage: ThrottlerStorage) {
    super(options, storage, new Reflector());
    this.memory = storage instanceof MemoryThrottlerStorage ? storage : undefined;
  }

  /** As the library's, without switchToHttp()'s closures (http-arguments.ts); its fallback reads it too. */
  protected override getRequestResponse(context: ExecutionContext): {
    req: Record<string, unknown>;
    res: Record<string, unknown>;
  } {
    return { req: httpRequestOf(context), res: httpReplyOf(context) };
  }

  /** canActivate, answered synchronously where it can be (the library's returns a promise). */
  admit(context: ExecutionContext): boolean | Promise<boolean> {
    const quota = this.quotas.get(context);
    if (quota === SKIPPED) return true;
    if (quota === LIBRARY) return this.canActivate(context);
    const { req, res } = this.getRequestResponse(context);
    const tracker = this.commonOptions.getTracker!(req, context);
    // A tracker that answers later is the library's to await.
    if (typeof tracker !== 'string') return this.canActivate(context);
    const key = this.commonOptions.generateKey!(context, tracker, quota.name);
    const { ttl, limit, blockDuration, name } = quota;
    if (this.memory) {
      const record = this.memory.hit(key, ttl, limit, blockDuration, name);
      return this.counted(context, res, quota, key, tracker, record);
    }
    return this.storageService
      .increment(key, ttl, limit, blockDuration, name)
      .then((record) => this.counted(context, res, quota, key, tracker, record));
  }

  /** As the library's handleRequest: the headers, and past the limit its ThrottlerException. */
  private counted(
    context: ExecutionContext,
    res: Record<string, unknown>,
    quota: Quota,
    key: string,
    tracker: string,
    record: StorageRecord,
  ): true | Promise<boolean> {
    const { totalHits, timeToExpire, isBlocked, timeToBlockExpire } = record;
    const { limit, ttl, headers } = quota;
    if (isBlocked) {
      this.setResponseHeader(res, headers.retryAfter, timeToBlockExpire);
      return this.throwThrottlingException(context, { limit, ttl, key, tracker, ...record }).then(
        () => false,
      );
    }
    this.setResponseHeader(res, headers.limit, limit);
    this.setResponseHeader(res, headers.remaining, Math.max(0, limit - totalHits));
    this.setResponseHeader(res, headers.reset, timeToExpire);
    return true;
  }

  /** What the library's canActivate would read for this route, read once. */
  private quotaOf(handler: () => unknown, classRef: Type): Quota | typeof SKIPPED | typeof LIBRARY {
    const { skipIf, ignoreUserAgents, setHeaders } = this.commonOptions;
    if (this.throttlers.length !== 1 || skipIf || ignoreUserAgents || setHeaders === false) {
      return LIBRARY;
    }
    const [throttler] = this.throttlers;
    // onModuleInit named every throttler.
    const name = throttler.name!;
    const read = (key: string): unknown =>
      this.reflector.getAllAndOverride(key + name, [handler, classRef]);
    if (read(SKIP_KEY)) return SKIPPED;
    const { limit, ttl, blockDuration = ttl } = throttler;
    if (
      THROTTLE_KEYS.some((key) => read(key) !== undefined) ||
      typeof limit !== 'number' ||
      typeof ttl !== 'number' ||
      typeof blockDuration !== 'number' ||
      throttler.skipIf ||
      throttler.ignoreUserAgents ||
      throttler.getTracker ||
      throttler.generateKey ||
      throttler.setHeaders === false
    ) {
      return LIBRARY;
    }
    // The library's names: its prefix, and a suffix for any throttler but `default`.
    const suffix = name === 'default' ? '' : `-${name}`;
    return {
      name,
      limit,
      ttl,
      blockDuration,
      headers: {
        limit: `${this.headerPrefix}-Limit${suffix}`,
        remaining: `${this.headerPrefix}-Remaining${suffix}`,
        reset: `${this.headerPrefix}-Reset${suffix}`,
        retryAfter: `Retry-After${suffix}`,
      },
    };
  }
}

/**
 * The quota guard (APP_GUARD): QuotaGuard's answer. Not a subclass of ThrottlerGuard itself, whose
 * canActivate is typed to return a promise: Nest takes a guard's boolean as it is, and awaits
 * anything else, one more turn of the microtask queue for every request.
 */
@Injectable()
export class RateLimitGuard implements CanActivate, OnModuleInit {
  private readonly quotas: QuotaGuard;

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
  ) {
    this.quotas = new QuotaGuard(options, storage);
  }

  onModuleInit(): Promise<void> {
    return this.quotas.onModuleInit();
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    return this.quotas.admit(context);
  }
}
