import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenCli } from './support/service-process.js';
import type { DatabaseKind } from '../src/database/data-source-options.js';
import { databaseKinds } from './support/test-database.js';
import { eventually } from './support/eventually.js';
import {
  createPlants,
  subscribeOver,
  useWebhookService,
  WEBHOOK_TOKEN as TOKEN,
  type WebhookServiceRun,
} from './support/webhook-load.js';
import {
  type OpenCount,
  openCount,
  startReceiver,
  type WebhookReceiver,
} from './support/webhook-receiver.js';

/**
 * Receivers that hang (never answer within WEBHOOK_TIMEOUT_MS) hold at most
 * WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION of an instance's slots each, and one
 * owner's together at most half of WEBHOOK_CONCURRENCY: other deliveries are
 * sent meanwhile, long before a hanging attempt times out and frees its slot.
 */
const TIMEOUT_MS = 8000;
/** Well under TIMEOUT_MS: what flows must not have waited for a hanging attempt to end. */
const PROMPTLY_MS = TIMEOUT_MS / 2;

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

/**
 * For a describe block: the built service with `concurrency` and
 * `perSubscription`, and a token for another owner than WEBHOOK_TOKEN's.
 */
function useFairService(
  kind: DatabaseKind,
  concurrency: number,
  perSubscription: number,
): { current: WebhookServiceRun & { otherToken: string } } {
  const run = useWebhookService(kind, {
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_CONCURRENCY: String(concurrency),
    WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: String(perSubscription),
  });
  const holder = {} as { current: WebhookServiceRun & { otherToken: string } };
  beforeAll(async () => {
    const created = await tokenCli(['create', '--owner', 'other'], {
      NODE_ENV: 'production',
      DATABASE_URL: run.current.database.url,
    });
    expect(created.code, created.stderr).toBe(0);
    holder.current = { ...run.current, otherToken: created.stdout.trim() };
  });
  return holder;
}

describe.each(databaseKinds())('webhook fairness between receivers on %s', (kind) => {
  const receivers: WebhookReceiver[] = [];
  const receiver = async (hang: boolean, together?: OpenCount) => {
    const started = await startReceiver(() => (hang ? 'hang' : 204), together);
    receivers.push(started);
    return started;
  };
  afterAll(async () => {
    for (const started of receivers) await started.close();
  });

  describe('one subscription', () => {
    const run = useFairService(kind, 16, 3);

    it('a hanging receiver gets at most its cap at once; the owner’s other subscription and another owner’s flow meanwhile', async () => {
      const { service, otherToken } = run.current;
      const hanging = await receiver(true);
      await subscribeOver(service.url, TOKEN, hanging.url);
      // A backlog for the hanging receiver, older than anything after it.
      await createPlants([service.url], TOKEN, range(1, 20));
      await eventually(
        () => hanging.open >= 3,
        () => `the hanging receiver has ${hanging.open} requests open, not 3`,
      );

      const sameOwner = await receiver(false);
      const otherOwner = await receiver(false);
      await subscribeOver(service.url, TOKEN, sameOwner.url);
      await subscribeOver(service.url, otherToken, otherOwner.url);
      const started = Date.now();
      await createPlants([service.url], TOKEN, range(21, 5));
      await createPlants([service.url], otherToken, range(1, 5));
      await sameOwner.waitFor(5, PROMPTLY_MS);
      await otherOwner.waitFor(5, PROMPTLY_MS);
      expect(Date.now() - started).toBeLessThan(PROMPTLY_MS);

      // Through a timeout and its retries too: the three attempts time out, and three more take their places.
      await eventually(
        () => hanging.received.length >= 6,
        () => `the hanging receiver got ${hanging.received.length} requests, not 6`,
        3 * TIMEOUT_MS,
      );
      expect(hanging.received.length).toBeGreaterThan(3);
      expect(hanging.mostOpen).toBe(3);
    }, 60_000);
  });

  describe('one owner', () => {
    const run = useFairService(kind, 8, 2);

    it('an owner whose receivers all hang holds at most half of WEBHOOK_CONCURRENCY; another owner’s deliveries flow', async () => {
      const { service, otherToken } = run.current;
      // Three subscriptions with a cap of 2 each could hold 6 of the 8 slots.
      const owner = openCount();
      const hanging = [
        await receiver(true, owner),
        await receiver(true, owner),
        await receiver(true, owner),
      ];
      for (const started of hanging) await subscribeOver(service.url, TOKEN, started.url);
      await createPlants([service.url], TOKEN, range(1, 10));
      await eventually(
        () => owner.open >= 4,
        () => `the owner's receivers have ${owner.open} requests open, not 4`,
      );

      const otherOwner = await receiver(false);
      await subscribeOver(service.url, otherToken, otherOwner.url);
      const started = Date.now();
      await createPlants([service.url], otherToken, range(1, 8));
      await otherOwner.waitFor(8, PROMPTLY_MS);
      expect(Date.now() - started).toBeLessThan(PROMPTLY_MS);

      // Through a timeout and its retries too: the four attempts time out, and four more
      // take their places, never more than 4 at once.
      const sent = () => hanging.reduce((sum, started) => sum + started.received.length, 0);
      await eventually(
        () => sent() >= 8,
        () => `the owner's receivers got ${sent()} requests, not 8`,
        3 * TIMEOUT_MS,
      );
      expect(sent()).toBeGreaterThan(4);
      expect(owner.mostOpen).toBe(4);
      // Each receiver alone stayed within its own cap.
      expect(hanging.map((started) => started.mostOpen <= 2)).toEqual([true, true, true]);
    }, 60_000);
  });
});
