import { describe, expect, it } from 'vitest';
import type { HostResolver } from './host-resolver.js';
import { WebhookSender } from './webhook-sender.js';

const event = { url: 'http://receiver.test/hook', secrets: ['s'], eventId: 'e1', body: '{}' };
const options = { timeoutMs: 100, allowHttp: true, allowPrivateTargets: true };
/** A resolver that never answers, as a DNS server that drops the query. */
const silent = { resolve: () => new Promise<never>(() => undefined) } as HostResolver;

describe('WebhookSender', () => {
  it("ends an attempt at its timeout while the host's name is still being resolved", async () => {
    const started = Date.now();
    await expect(new WebhookSender(options, silent).send(event)).resolves.toEqual({
      error: 'no answer within 100 ms',
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('is stopped (shutdown) during the resolution', async () => {
    const stop = new AbortController();
    const sending = new WebhookSender({ ...options, timeoutMs: 60_000 }, silent).send(
      event,
      stop.signal,
    );
    stop.abort();
    await expect(sending).resolves.toEqual({ error: 'stopped' });
  });

  it('still says why a name that does not resolve is refused', async () => {
    const failing = {
      resolve: () => Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' })),
    } as unknown as HostResolver;
    await expect(new WebhookSender(options, failing).send(event)).resolves.toEqual({
      error: 'request failed: ENOTFOUND',
    });
  });
});
