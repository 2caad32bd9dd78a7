import { isIP } from 'node:net';
import { vi } from 'vitest';
import { HostResolver } from '../../src/webhooks/host-resolver.js';
import type { TestApp } from './test-app.js';

/**
 * Makes the app's webhook host resolver answer from `table` (CI has no
 * outside DNS): a name in it resolves to its addresses, any other name does
 * not resolve. The table may be changed afterwards (DNS that changes).
 */
export function fakeDns(t: TestApp, table: Record<string, string[]>): Record<string, string[]> {
  vi.spyOn(t.app.get(HostResolver), 'resolve').mockImplementation((host: string) => {
    const addresses = table[host.toLowerCase()];
    if (!addresses) {
      return Promise.reject(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }),
      );
    }
    return Promise.resolve(addresses.map((address) => ({ address, family: isIP(address) })));
  });
  return table;
}
