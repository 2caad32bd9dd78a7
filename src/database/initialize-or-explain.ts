import { permanentFailure } from './database-errors.js';

/** Start-up met a permanent failure (permanentFailure): retrying cannot help, so it stops. */
export class DatabaseMisconfiguredError extends Error {
  constructor(message: string) {
    // No `cause`: the message quotes it already, and the log would say it twice.
    super(message);
    this.name = 'DatabaseMisconfiguredError';
  }
}

/**
 * Connects `dataSource` (start-up, the migrations job, the token command
 * line); a permanent failure becomes a DatabaseMisconfiguredError that names
 * it, which no one retries.
 */
export async function initializeOrExplain<T extends { initialize(): Promise<T> }>(
  dataSource: T,
): Promise<T> {
  try {
    return await dataSource.initialize();
  } catch (error) {
    const permanent = permanentFailure(error);
    if (permanent === undefined) throw error;
    throw new DatabaseMisconfiguredError(permanent);
  }
}
