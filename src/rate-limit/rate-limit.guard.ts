import { Injectable, type Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';

/**
 * A Reflector that reads each key of each target once. Route metadata is
 * written by decorators when a class is defined and not changed afterwards,
 * so a read can be remembered; reflect-metadata walks a target's prototype
 * chain on every read of a key it lacks.
 */
class RememberingReflector extends Reflector {
  private readonly remembered = new WeakMap<object, Map<unknown, { value: unknown }>>();

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Reflector.get's own return type
  override get(metadataKey: unknown, target: Type<unknown> | object): any {
    let byKey = this.remembered.get(target);
    if (byKey === undefined) {
      byKey = new Map<unknown, { value: unknown }>();
      this.remembered.set(target, byKey);
    }
    let read = byKey.get(metadataKey);
    if (read === undefined) {
      read = { value: super.get(metadataKey, target as Type<unknown>) };
      byKey.set(metadataKey, read);
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
 * each is read once per route; canActivate stays the library's.
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
