import type { ThrottlerStorage } from '@nestjs/throttler';

/** ThrottlerStorageRecord, which @nestjs/throttler does not export from its index. */
export type StorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * What a storage answers for one hit, from its counters in milliseconds: the
 * library wants whole seconds (they become X-RateLimit-Reset and Retry-After).
 */
export function storageRecord(
  totalHits: number,
  msToWindowEnd: number,
  msBlocked: number,
): StorageRecord {
  const blocked = Math.max(0, msBlocked);
  return {
    totalHits,
    timeToExpire: Math.max(0, Math.ceil(msToWindowEnd / 1000)),
    isBlocked: blocked > 0,
    timeToBlockExpire: Math.ceil(blocked / 1000),
  };
}
