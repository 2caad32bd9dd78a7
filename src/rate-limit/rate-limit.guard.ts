import { Injectable, type Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import { PerRoute } from '../http/per-route.js';

/**
 * A Reflector that reads each key of each route once (PerRoute): route
 * metadata is written by decorators when a class is defined and not changed
 * afterwards.
 */
class RememberingReflector extends Reflector {
  private readonly reads = new PerRoute(() => new Map<unknown, { value: unknown }>());

  override getAllAndOverride(
    metadataKey: unknown,
    targets: Parameters<Reflector['get']>[1][],
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Reflector's own return type
  ): any {
    if (targets.length !== 2) return super.getAllAndOverride(metadataKey, targets);
    const [handler, classRef] = targets as [() => unknown, Type];
    const reads = this.reads.of(handler, classRef);
    let read = reads.get(metadataKey);
    if (read === undefined) {
      read = { value: super.getAllAndOverride(metadataKey, targets) };
      reads.set(metadataKey, read);
    }
    return read.value;
  }
}

/**
 * @nestjs/throttler's ThrottlerGuard, unchanged but for where it reads route
 * metadata: @nestjs/throttler 6.7 reads six keys from the handler and its
 * class on every request (`@Throttle`, `@SkipThrottle` and the rest), twelve
 * reflect-metadata reads that cost about 3 % of a create's instructions
 * (BENCHMARKS.md, "Instructions per request"). Through RememberingReflector
 * each key is read once per route; canActivate stays the library's.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
  ) {
    super(options, storage, new RememberingReflector());
  }
}
