import { HttpStatus } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { Reflector } from '@nestjs/core';
import {
  SkipThrottle,
  Throttle,
  ThrottlerException,
  ThrottlerGuard,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import { describe, expect, it, vi } from 'vitest';
import { MemoryThrottlerStorage } from './memory-throttler.storage.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { throttlerOptions } from './throttler-options.js';

class Routes {
  plain(): void {}

  other(): void {}

  @SkipThrottle()
  skipped(): void {}

  @Throttle({ default: { limit: 1, ttl: 60_000 } })
  strict(): void {}
}

/** A Fastify-like reply that records its headers, and a request from an owner or only an address. */
function call(handler: () => void, caller: { owner?: string; ip?: string } = { owner: 'alice' }) {
  const headers: Record<string, string | number> = {};
  const reply = { header: (name: string, value: string | number) => (headers[name] = value) };
  const request = {
    ...(caller.owner ? { user: { owner: caller.owner } } : {}),
    ip: caller.ip ?? '10.0.0.1',
    headers: {},
  };
  return { context: new ExecutionContextHost([request, reply], Routes, handler), headers };
}

async function guardWith(storage: ThrottlerStorage = new MemoryThrottlerStorage()) {
  const options = throttlerOptions({ windowMs: 60_000, maxRequests: 2, storage });
  const guard = new RateLimitGuard(options, storage);
  await guard.onModuleInit();
  return guard;
}

/** The error a guard answer rejects with. */
async function refusal(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected the request to be refused');
}

describe("the request quota on @nestjs/throttler's ThrottlerGuard (RateLimitGuard)", () => {
  it('sets the budget, what is left of it and the seconds to the window end', async () => {
    const guard = await guardWith();
    const { context, headers } = call(Routes.prototype.plain);
    expect(await guard.canActivate(context)).toBe(true);
    expect(headers).toEqual({
      'X-RateLimit-Limit': 2,
      'X-RateLimit-Remaining': 1,
      'X-RateLimit-Reset': 60,
    });
  });

  it('counts one budget per owner across routes, and refuses past it with Retry-After', async () => {
    const guard = await guardWith();
    await guard.canActivate(call(Routes.prototype.plain).context);
    await guard.canActivate(call(Routes.prototype.other).context);
    const { context, headers } = call(Routes.prototype.plain);
    const error = await refusal(() => guard.canActivate(context));
    expect(error).toBeInstanceOf(ThrottlerException);
    expect((error as ThrottlerException).getStatus()).toBe(HttpStatus.TOO_MANY_REQUESTS);
    expect((error as ThrottlerException).message).toMatch(/retry after/);
    expect(headers['Retry-After']).toBe(60);
    // Another owner from the same address has a budget of its own.
    expect(await guard.canActivate(call(Routes.prototype.plain, { owner: 'bob' }).context)).toBe(
      true,
    );
  });

  it('counts per client address when there is no owner', async () => {
    const guard = await guardWith();
    const anonymous = { ip: '10.0.0.7' };
    await guard.canActivate(call(Routes.prototype.plain, anonymous).context);
    await guard.canActivate(call(Routes.prototype.plain, anonymous).context);
    expect(
      await refusal(() => guard.canActivate(call(Routes.prototype.plain, anonymous).context)),
    ).toBeInstanceOf(ThrottlerException);
    expect(await guard.canActivate(call(Routes.prototype.plain, { ip: '10.0.0.8' }).context)).toBe(
      true,
    );
  });

  it('does not count a @SkipThrottle() route', async () => {
    const storage = new MemoryThrottlerStorage();
    const guard = await guardWith(storage);
    const { context, headers } = call(Routes.prototype.skipped);
    expect(await guard.canActivate(context)).toBe(true);
    expect(headers).toEqual({});
    expect(storage.size).toBe(0);
  });

  it("applies a route's @Throttle() limit", async () => {
    const guard = await guardWith();
    expect(await guard.canActivate(call(Routes.prototype.strict).context)).toBe(true);
    const { context, headers } = call(Routes.prototype.strict);
    expect(await refusal(() => guard.canActivate(context))).toBeInstanceOf(ThrottlerException);
    expect(headers['Retry-After']).toBe(60);
  });

  it("reads a route's metadata once, and keeps answering from it", async () => {
    const guard = await guardWith();
    const reads = vi.spyOn(Reflect, 'getMetadata');
    try {
      await guard.canActivate(call(Routes.prototype.plain).context);
      const first = reads.mock.calls.length;
      expect(first).toBeGreaterThan(0);
      await guard.canActivate(call(Routes.prototype.plain).context);
      const { context, headers } = call(Routes.prototype.plain);
      expect(await refusal(() => guard.canActivate(context))).toBeInstanceOf(ThrottlerException);
      expect(headers['Retry-After']).toBe(60);
      expect(reads.mock.calls.length).toBe(first);
    } finally {
      reads.mockRestore();
    }
  });

  it('answers a counted request of the in-memory storage at once, not as a promise', async () => {
    const guard = await guardWith();
    expect(guard.canActivate(call(Routes.prototype.plain).context)).toBe(true);
    expect(guard.canActivate(call(Routes.prototype.skipped).context)).toBe(true);
  });

  // The guard answers most routes without the library's canActivate: what it answers, headers
  // and refusals, is checked here against that canActivate, request by request.
  describe("answers as @nestjs/throttler's own guard does", () => {
    /** A storage of another process (Redis's place): it answers with a promise. */
    const remote = (): ThrottlerStorage => {
      const memory = new MemoryThrottlerStorage();
      return { increment: (...args) => memory.increment(...args) };
    };
    const storages: Array<[string, () => ThrottlerStorage]> = [
      ['in memory', () => new MemoryThrottlerStorage()],
      ['elsewhere', remote],
    ];

    it.each(storages)('with the storage %s', async (_, storage) => {
      const ours = await guardWith(storage());
      const theirsStorage = storage();
      const theirs = new ThrottlerGuard(
        throttlerOptions({ windowMs: 60_000, maxRequests: 2, storage: theirsStorage }),
        theirsStorage,
        new Reflector(),
      );
      await theirs.onModuleInit();
      const requests: Array<[() => void, { owner?: string; ip?: string }]> = [
        [Routes.prototype.plain, { owner: 'alice' }],
        [Routes.prototype.other, { owner: 'alice' }],
        [Routes.prototype.skipped, { owner: 'alice' }],
        [Routes.prototype.plain, { owner: 'alice' }],
        [Routes.prototype.plain, { owner: 'bob' }],
        [Routes.prototype.strict, { owner: 'carol' }],
        [Routes.prototype.strict, { owner: 'carol' }],
        [Routes.prototype.plain, { ip: '10.0.0.9' }],
      ];
      for (const [handler, caller] of requests) {
        const answer = async (guard: { canActivate(context: unknown): unknown }) => {
          const { context, headers } = call(handler, caller);
          try {
            return { allowed: await guard.canActivate(context), headers };
          } catch (error) {
            const { message, constructor } = error as Error;
            return { refused: [constructor.name, message], headers };
          }
        };
        expect(await answer(ours)).toEqual(await answer(theirs));
      }
    });
  });
});
