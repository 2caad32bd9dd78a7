import type { ArgumentsHost } from '@nestjs/common';

/**
 * The request of an HTTP call: what `host.switchToHttp().getRequest()` gives,
 * the host's first argument. `switchToHttp()` makes three closures and copies
 * them onto the host with Object.assign on every call (@nestjs/core 12,
 * ExecutionContextHost), about 1,000 instructions; the request path of a route
 * asked for it four times (the bearer guard, the quota, two parameter
 * decorators). BENCHMARKS.md, "Instructions per request".
 */
export const httpRequestOf = <T>(host: ArgumentsHost): T => host.getArgByIndex<T>(0);

/** The reply of an HTTP call: `host.switchToHttp().getResponse()`, the host's second argument. */
export const httpReplyOf = <T>(host: ArgumentsHost): T => host.getArgByIndex<T>(1);
