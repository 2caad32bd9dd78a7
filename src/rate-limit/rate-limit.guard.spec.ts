import { HttpStatus } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import {
  SkipThrottle,
  Throttle,
  ThrottlerException,
  type ThrottlerModuleOptions,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import { describe, expect, it } from 'vitest';
import { MemoryThrottlerStorage } from './memory-throttler.storage.js';
import { RateLimitGuard } from './rate-limit.guard.js';

class Routes {
  plain(): void {}

  @SkipThrottle()
  skipped(): void {}

  @Throttle({ default: { limit: 1, ttl: 60_000 } })
  strict(): void {}

  @Throttle({ default: { limit: () => 1, ttl: 60_000 } })
  resolvedPerRequest(): void {}
}

/** A Fastify-like reply that records its headers, and a request from one owner. */
function call(handler: () => void, owner = 'alice') {
  const headers: Record<string, string | number> = {};
  const reply = { header: (name: string, value: string | number) => (headers[name] = value) };
  const request = { user: { owner }, ip: '10.0.0.1', headers: {} };
  return { context: new ExecutionContextHost([request, reply], Routes, handler), headers };
}

const OPTIONS: ThrottlerModuleOptions = {
  throttlers: [{ name: 'default', ttl: 60_000, limit: 2 }],
  getTracker: (request: Record<string, unknown>) =>
    `owner:${(request.user as { owner: string }).owner}`,
  generateKey: (_context, tracker, name) => `${name}:${tracker}`,
};

async function guardWith(storage: ThrottlerStorage = new MemoryThrottlerStorage()) {
  const guard = new RateLimitGuard(OPTIONS, storage, new Reflector());
  await guard.onModuleInit();
  return guard;
}

/** The error a guard answer rejects with (or throws). */
async function refusal(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected the request to be refused');
}

describe('RateLimitGuard', () => {
  it('counts a request without a promise when the storage is in memory, and sets the headers', async () => {
    const guard = await guardWith();
    const { context, headers } = call(Routes.prototype.plain);
    expect(guard.canActivate(context)).toBe(true);
    expect(headers).toEqual({
      'X-RateLimit-Limit': 2,
      'X-RateLimit-Remaining': 1,
      'X-RateLimit-Reset': 60,
    });
  });

  it('refuses past the limit with the library exception and Retry-After, per owner', async () => {
    const guard = await guardWith();
    await guard.canActivate(call(Routes.prototype.plain).context);
    await guard.canActivate(call(Routes.prototype.plain).context);
    const { context, headers } = call(Routes.prototype.plain);
    const error = await refusal(() => guard.canActivate(context));
    expect(error).toBeInstanceOf(ThrottlerException);
    expect((error as ThrottlerException).getStatus()).toBe(HttpStatus.TOO_MANY_REQUESTS);
    expect(headers['Retry-After']).toBe(60);
    // Another owner has a budget of its own.
    expect(guard.canActivate(call(Routes.prototype.plain, 'bob').context)).toBe(true);
  });

  it('does not count a @SkipThrottle() route', async () => {
    const storage = new MemoryThrottlerStorage();
    const guard = await guardWith(storage);
    const { context, headers } = call(Routes.prototype.skipped);
    expect(guard.canActivate(context)).toBe(true);
    expect(headers).toEqual({});
    expect(storage.size).toBe(0);
  });

  it("applies a route's @Throttle() limit, read once and kept", async () => {
    const guard = await guardWith();
    expect(guard.canActivate(call(Routes.prototype.strict).context)).toBe(true);
    const { context, headers } = call(Routes.prototype.strict);
    expect(await refusal(() => guard.canActivate(context))).toBeInstanceOf(ThrottlerException);
    expect(headers['Retry-After']).toBe(60);
  });

  it('leaves a limit worked out per request to the library, with the same result', async () => {
    const guard = await guardWith();
    const first = call(Routes.prototype.resolvedPerRequest);
    const answer = guard.canActivate(first.context);
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toBe(true);
    expect(first.headers['X-RateLimit-Limit']).toBe(1);
    const second = call(Routes.prototype.resolvedPerRequest);
    expect(await refusal(() => guard.canActivate(second.context))).toBeInstanceOf(
      ThrottlerException,
    );
  });

  it('waits for a storage that answers with a promise (Redis), counting the same way', async () => {
    const memory = new MemoryThrottlerStorage();
    const remote: ThrottlerStorage = {
      increment: async (...args) => memory.increment(...args),
    };
    const guard = await guardWith(remote);
    const { context, headers } = call(Routes.prototype.plain);
    const answer = guard.canActivate(context);
    expect(answer).toBeInstanceOf(Promise);
    expect(await answer).toBe(true);
    expect(headers['X-RateLimit-Remaining']).toBe(1);
    await guard.canActivate(call(Routes.prototype.plain).context);
    expect(
      await refusal(() => guard.canActivate(call(Routes.prototype.plain).context)),
    ).toBeInstanceOf(ThrottlerException);
  });
});
