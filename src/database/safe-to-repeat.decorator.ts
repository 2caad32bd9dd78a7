import { SetMetadata } from '@nestjs/common';

export const SAFE_TO_REPEAT = 'plant-store:safe-to-repeat';

/**
 * Marks a route other than a GET whose handler may run again after a
 * database failure whatever that failure left behind (an idempotent write,
 * such as a create whose exact replay answers as the first did). Without it,
 * a write is repeated only when nothing of it ran (database-retry.ts).
 */
export const SafeToRepeat = () => SetMetadata(SAFE_TO_REPEAT, true);
