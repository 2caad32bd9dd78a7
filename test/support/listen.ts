import type { TestApp } from './test-app.js';

/**
 * Lets the app listen on a free port of the loopback interface, for clients
 * that need a URL (fetch, a browser) rather than supertest's in-process server.
 */
export async function listen(t: TestApp): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  return t.app.getUrl();
}
