import { PageCursors } from '../../src/http/page-cursor.js';

/**
 * The CURSOR_SECRET every app and service a test starts has unless it sets its
 * own, as every production deployment must: so a test can make cursors the
 * service takes, with positions the service would never write.
 */
export const TEST_CURSOR_SECRET = 'test-cursor-secret-0123456789abcdef';

/** Cursors as a service with CURSOR_SECRET `secret` makes them. */
export const cursorsWithSecret = (secret: string): PageCursors => new PageCursors(secret);

/** Cursors as the service under test makes them. */
export const testCursors = cursorsWithSecret(TEST_CURSOR_SECRET);
