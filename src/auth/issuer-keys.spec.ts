import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { IssuerKeys } from './issuer-keys.js';

const JWKS_URI = 'https://idp.example.com/jwks';

describe('IssuerKeys refreshed periodically', () => {
  let jwk: JWK;
  let token: string;
  const header = () => {
    const [h] = token.split('.');
    return JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg: string; kid: string };
  };
  const input = () => ({ payload: '', signature: '' });

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    token = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(privateKey);
  });
  afterEach(() => vi.useRealTimers());

  function keysServedBy(answer: () => Response) {
    const fetched = vi.fn(async () => answer());
    const keys = new IssuerKeys({
      issuer: 'https://idp.example.com',
      jwksUri: JWKS_URI,
      cooldownMs: 0,
      isAllowedUrl: () => true,
      fetch: fetched,
    });
    return { keys, fetched };
  }

  it('fetches the key set every period, keeps the last good keys when a refresh fails, and stops', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let up = true;
    const { keys, fetched } = keysServedBy(() =>
      up ? Response.json({ keys: [jwk] }) : new Response('down', { status: 502 }),
    );
    await keys.refetch();
    expect(keys.stillLists('k1', 0)).toBe(true);
    const failures = vi.fn();
    keys.startRefreshing(1000, failures);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fetched).toHaveBeenCalledTimes(2);
    expect(failures).not.toHaveBeenCalled();

    up = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(fetched).toHaveBeenCalledTimes(3);
    expect(failures).toHaveBeenCalledTimes(1);
    expect(String(keys.lastError)).toMatch(/answered 502/);
    expect(keys.stillLists('k1', 0)).toBe(true);
    await expect(keys.resolve(header(), input())).resolves.toBeDefined();

    keys.stopRefreshing();
    await vi.advanceTimersByTimeAsync(5000);
    expect(fetched).toHaveBeenCalledTimes(3);
  });

  it('no longer lists a key the issuer dropped after a refresh', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let served = [{ ...jwk }];
    const { keys } = keysServedBy(() => Response.json({ keys: served }));
    await keys.refetch();
    keys.startRefreshing(1000, () => {});
    served = [{ ...jwk, kid: 'k2' }];
    await vi.advanceTimersByTimeAsync(1000);
    expect(keys.stillLists('k1', 0)).toBe(false);
    expect(keys.stillLists('k2', 0)).toBe(true);
    keys.stopRefreshing();
  });

  it('does not keep the process alive with its timer', () => {
    const { keys } = keysServedBy(() => Response.json({ keys: [jwk] }));
    const spy = vi.spyOn(globalThis, 'setInterval');
    keys.startRefreshing(1000, () => {});
    const timer = spy.mock.results[0].value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    keys.stopRefreshing();
    spy.mockRestore();
  });
});
