import { type ExecutionContext, Injectable, type Type } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerOptions } from '@nestjs/throttler';
// Not exported from the package's index; the package has no "exports" map, so the file is reachable.
import {
  THROTTLER_BLOCK_DURATION,
  THROTTLER_KEY_GENERATOR,
  THROTTLER_LIMIT,
  THROTTLER_SKIP,
  THROTTLER_TRACKER,
  THROTTLER_TTL,
} from '@nestjs/throttler/dist/throttler.constants.js';
import { PerRoute } from '../http/per-route.js';
import { MemoryThrottlerStorage, type StorageRecord } from './memory-throttler.storage.js';

/**
 * ThrottlerGuard declares canActivate as returning a promise; Nest's guard
 * runner (and CanActivate's own type) takes a plain boolean as well, and
 * awaits only a promise. Answering a counted request synchronously saves that
 * await; only Nest calls a guard, so the narrower declared type is kept.
 */
const synchronously = (allowed: boolean) => allowed as unknown as Promise<boolean>;

/** One named throttler's settings for one route, once @Throttle/@SkipThrottle are applied. */
interface RouteLimit {
  throttler: ThrottlerOptions & { name: string };
  limit: number;
  ttl: number;
  blockDuration: number;
  getTracker: NonNullable<ThrottlerOptions['getTracker']>;
  generateKey: NonNullable<ThrottlerOptions['generateKey']>;
  /** The X-RateLimit-* header names, with the throttler's suffix. */
  headers: { limit: string; remaining: string; reset: string; retryAfter: string };
  setHeaders: boolean;
}

/**
 * @nestjs/throttler's ThrottlerGuard, doing per request only what depends on
 * the request.
 *
 * The library's canActivate reads six pieces of route metadata for every
 * throttler and awaits seven times on every request; with rate limiting on,
 * that guard cost about a quarter of the service's CPU time per list request
 * (BENCHMARKS.md). Here a route's settings are read once, on its first
 * request, and with the in-memory storage a request is counted without a
 * promise, so the guard answers synchronously (Nest awaits a guard only when
 * it returns a promise). The counting, the headers and the 429 are the
 * library's: same storage, same keys, ThrottlerException with its message.
 *
 * A route whose settings are functions of the request (a Resolvable limit or
 * ttl), and the options this path leaves out (skipIf, ignoreUserAgents), go
 * through the library's own canActivate, unchanged.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  /** Per route: its limits, or null for the library's path. */
  private readonly routes = new PerRoute((handler, classRef) =>
    this.resolveLimits(handler, classRef),
  );

  override canActivate(context: ExecutionContext): Promise<boolean> {
    const limits = this.routes.get(context);
    if (limits === null) return super.canActivate(context);
    const { req, res } = this.getRequestResponse(context);
    // Synchronous all the way through when the storage and the tracker are; a promise only otherwise.
    for (let i = 0; i < limits.length; i++) {
      const route = limits[i];
      const tracker = route.getTracker(req, context);
      if (typeof tracker !== 'string') return this.countFrom(context, limits, i, tracker);
      const key = route.generateKey(context, tracker, route.throttler.name);
      const record = this.count(route, key);
      if (record instanceof Promise) {
        return record.then(
          (settled) =>
            this.apply(context, res, route, key, tracker, settled) ??
            this.countFrom(context, limits, i + 1),
        );
      }
      const refused = this.apply(context, res, route, key, tracker, record);
      if (refused) return refused;
    }
    return synchronously(true);
  }

  /** The asynchronous rest of canActivate, from the i-th throttler on. */
  private async countFrom(
    context: ExecutionContext,
    limits: RouteLimit[],
    from: number,
    pendingTracker?: Promise<string>,
  ): Promise<boolean> {
    const { req, res } = this.getRequestResponse(context);
    for (let i = from; i < limits.length; i++) {
      const route = limits[i];
      const tracker =
        i === from && pendingTracker ? await pendingTracker : await route.getTracker(req, context);
      const key = route.generateKey(context, tracker, route.throttler.name);
      const record = await this.count(route, key);
      const refused = this.apply(context, res, route, key, tracker, record);
      if (refused) return refused;
    }
    return true;
  }

  private count(route: RouteLimit, key: string): StorageRecord | Promise<StorageRecord> {
    const args = [key, route.ttl, route.limit, route.blockDuration, route.throttler.name] as const;
    return this.storageService instanceof MemoryThrottlerStorage
      ? this.storageService.hit(...args)
      : this.storageService.increment(...args);
  }

  /**
   * The X-RateLimit-* headers of a counted request; past the limit, Retry-After
   * and the library's ThrottlerException (a rejected promise: its
   * throwThrottlingException is async).
   */
  private apply(
    context: ExecutionContext,
    res: Record<string, unknown>,
    route: RouteLimit,
    key: string,
    tracker: string,
    record: StorageRecord,
  ): Promise<boolean> | undefined {
    if (record.isBlocked) {
      if (route.setHeaders) {
        this.setResponseHeader(res, route.headers.retryAfter, record.timeToBlockExpire);
      }
      const { limit, ttl } = route;
      return this.throwThrottlingException(context, { limit, ttl, key, tracker, ...record }).then(
        () => false,
      );
    }
    if (route.setHeaders) {
      this.setResponseHeader(res, route.headers.limit, route.limit);
      this.setResponseHeader(
        res,
        route.headers.remaining,
        Math.max(0, route.limit - record.totalHits),
      );
      this.setResponseHeader(res, route.headers.reset, record.timeToExpire);
    }
    return undefined;
  }

  /** What the library's canActivate works out on every request, worked out once per route. */
  private resolveLimits(handler: object, classRef: Type): RouteLimit[] | null {
    if (this.commonOptions.skipIf || this.commonOptions.ignoreUserAgents) return null;
    const read = <T>(key: string, name: string) =>
      this.reflector.getAllAndOverride<T | undefined>(key + name, [
        handler as () => void,
        classRef,
      ]);
    const limits: RouteLimit[] = [];
    for (const throttler of this.throttlers as Array<ThrottlerOptions & { name: string }>) {
      if (throttler.skipIf || throttler.ignoreUserAgents) return null;
      if (read<boolean>(THROTTLER_SKIP, throttler.name)) continue;
      const limit =
        read<ThrottlerOptions['limit']>(THROTTLER_LIMIT, throttler.name) ?? throttler.limit;
      const ttl = read<ThrottlerOptions['ttl']>(THROTTLER_TTL, throttler.name) ?? throttler.ttl;
      const blockDuration =
        read<ThrottlerOptions['blockDuration']>(THROTTLER_BLOCK_DURATION, throttler.name) ??
        throttler.blockDuration ??
        ttl;
      if (typeof limit !== 'number' || typeof ttl !== 'number' || typeof blockDuration !== 'number')
        return null;
      const suffix = throttler.name === 'default' ? '' : `-${throttler.name}`;
      limits.push({
        throttler,
        limit,
        ttl,
        blockDuration,
        getTracker:
          read<ThrottlerOptions['getTracker']>(THROTTLER_TRACKER, throttler.name) ??
          throttler.getTracker ??
          this.commonOptions.getTracker!,
        generateKey:
          read<ThrottlerOptions['generateKey']>(THROTTLER_KEY_GENERATOR, throttler.name) ??
          throttler.generateKey ??
          this.commonOptions.generateKey!,
        headers: {
          limit: `${this.headerPrefix}-Limit${suffix}`,
          remaining: `${this.headerPrefix}-Remaining${suffix}`,
          reset: `${this.headerPrefix}-Reset${suffix}`,
          retryAfter: `Retry-After${suffix}`,
        },
        setHeaders: throttler.setHeaders ?? this.commonOptions.setHeaders ?? true,
      });
    }
    return limits;
  }
}
