import type { ExecutionContext, Type } from '@nestjs/common';

/**
 * A value worked out once per route (controller class and handler), such as
 * what a route's decorators say. Guards run on every request; reading a
 * route's metadata through the Reflector every time costs a few µs a request
 * (reflect-metadata walks the prototype chain on each read), and the metadata
 * of a route never changes once the app runs.
 */
export class PerRoute<T> {
  private readonly byClass = new WeakMap<Type, WeakMap<object, T>>();

  constructor(private readonly compute: (handler: () => unknown, classRef: Type) => T) {}

  get(context: ExecutionContext): T {
    return this.of(context.getHandler() as () => unknown, context.getClass());
  }

  /** The same, for a route named by its handler and class (where no context is at hand). */
  of(handler: () => unknown, classRef: Type): T {
    let handlers = this.byClass.get(classRef);
    if (!handlers) this.byClass.set(classRef, (handlers = new WeakMap()));
    if (handlers.has(handler)) return handlers.get(handler) as T;
    const value = this.compute(handler, classRef);
    handlers.set(handler, value);
    return value;
  }
}
