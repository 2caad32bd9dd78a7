/**
 * Resolves after the event loop has served what was waiting, I/O included:
 * where synchronous database work would otherwise run back to back in one
 * chain of promises, a request that arrived meanwhile gets its turn first.
 */
export const nextMacrotask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
