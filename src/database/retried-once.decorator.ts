import { retryOnce, type RetryPolicy } from './database-retry.js';
import { RequestScope } from './request-scope.js';

/**
 * Runs the decorated service method once more after a database failure that
 * `policy` allows (database-retry.ts), within what is left of the request's
 * deadline: `repeatable` for a read, and for a write whose repetition answers
 * as its first run would (a create, whose exact replay answers as the first
 * did); `if-nothing-ran` for every other write (a delete whose statement may
 * have run is not repeated).
 *
 * On the service's method, not around the route: the policy is read beside
 * the work it covers, and no Nest interceptor is needed, whose chain (rxjs
 * and an AsyncResource per request) costs every request of every route
 * (BENCHMARKS.md, "Where a list's time goes"). A method without it is not
 * repeated: its request answers 503 on an unavailable database. The
 * deadline is that of the method's RequestScope argument (request-scope.ts),
 * which it must take: called without one it refuses, rather than run the
 * work, and its retry, without a deadline.
 */
export function RetriedOnce(policy: RetryPolicy): MethodDecorator {
  return (_target, _key, descriptor) => {
    const work = descriptor.value as unknown as (...args: unknown[]) => Promise<unknown>;
    const retried = function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const scope = args.find((arg) => arg instanceof RequestScope);
      if (!scope) {
        const misuse = 'a @RetriedOnce method takes the RequestScope of the work it does';
        return Promise.reject(new TypeError(misuse));
      }
      return retryOnce(policy, () => work.apply(this, args), scope);
    };
    descriptor.value = retried as typeof descriptor.value;
  };
}
