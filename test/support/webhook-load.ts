import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { DatabaseKind } from '../../src/database/data-source-options.js';
import { eventually } from './eventually.js';
import { killHard, type ServiceProcess, startService } from './service-process.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';
import { type ReceivedWebhook, startReceiver, type WebhookReceiver } from './webhook-receiver.js';

export const WEBHOOK_TOKEN = 'pst_webhook-durability-token-0123456789abcdefgh';

/** The built service with the receiver's opt-ins, a fast poll, a short timeout and lease. */
export const WEBHOOK_SERVICE_ENV = {
  BOOTSTRAP_TOKEN: WEBHOOK_TOKEN,
  BOOTSTRAP_OWNER: 'durable',
  LOG_LEVEL: 'info',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,400ms,800ms,1s,1s,1s,1s,1s,1s',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_LEASE_MS: '2000',
};

/** Creates plants `ids` through `urls` in turn, `concurrency` at a time; returns the ids answered 200. */
export async function createPlants(
  urls: string[],
  token: string,
  ids: number[],
  concurrency = 16,
): Promise<Set<number>> {
  const acknowledged = new Set<number>();
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const index = next++;
      const id = ids[index];
      const response = await fetch(`${urls[index % urls.length]}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: `{"id":${id},"name":"plant ${id}"}`,
      });
      await response.text();
      if (response.status !== 200) throw new Error(`create ${id} answered ${response.status}`);
      acknowledged.add(id);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return acknowledged;
}

/** The plant id in a delivered NewPlant body. */
export const plantIdOf = (request: ReceivedWebhook): number =>
  Number(/^\{"id":(-?\d+),/.exec(request.body)![1]);

/** Subscribes the token's owner to `url` over HTTP; returns the subscription id. */
export async function subscribeOver(
  serviceUrl: string,
  token: string,
  url: string,
): Promise<string> {
  const response = await fetch(`${serviceUrl}/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  const body = (await response.json()) as { id: string };
  if (response.status !== 201) throw new Error(`subscribe answered ${response.status}`);
  return body.id;
}

/**
 * Until no webhook delivery is pending, as the webhook_deliveries_pending
 * gauge in `scrape()` (a /metrics text) counts them, for all instances. A
 * delivery is written with its create, sent only while pending, and leaves
 * that state only once its attempt was sent and recorded: after this nothing
 * more is sent, and a test may check what was not.
 */
export async function untilNothingPending(
  scrape: () => Promise<string>,
  timeoutMs = 30_000,
): Promise<void> {
  let gauge: string | undefined;
  await eventually(
    async () => {
      gauge = /^webhook_deliveries_pending .*$/m.exec(await scrape())?.[0];
      return gauge === 'webhook_deliveries_pending 0';
    },
    () => `deliveries still pending: ${gauge ?? 'no webhook_deliveries_pending gauge'}`,
    timeoutMs,
  );
}

/** untilNothingPending on a service process, through its /metrics. */
export const untilNothingPendingAt = (serviceUrl: string, timeoutMs?: number): Promise<void> =>
  untilNothingPending(async () => (await fetch(`${serviceUrl}/metrics`)).text(), timeoutMs);

export interface WebhookServiceRun {
  database: TestDatabase;
  service: ServiceProcess;
  receiver: WebhookReceiver;
}

/**
 * For a measurement suite (in a describe block): the built service in
 * production mode on a fresh database, with WEBHOOK_SERVICE_ENV and `env`, and
 * a receiver answering 204; all dropped afterwards. Read `.current` in the tests.
 */
export function useWebhookService(
  kind: DatabaseKind,
  env: Record<string, string> = {},
): { current: WebhookServiceRun } {
  const holder = {} as { current: WebhookServiceRun };
  let cwd: string;
  beforeAll(async () => {
    const database = await createTestDatabase(kind);
    cwd = await mkdtemp(join(tmpdir(), 'plant-store-webhooks-'));
    const receiver = await startReceiver(() => 204);
    const service = await startService(cwd, {
      ...WEBHOOK_SERVICE_ENV,
      DATABASE_URL: database.url,
      NODE_ENV: 'production',
      ...env,
    });
    holder.current = { database, service, receiver };
  });
  afterAll(async () => {
    const { database, service, receiver } = holder.current;
    await killHard(service);
    await receiver.close();
    await database.drop();
    await rm(cwd, { recursive: true, force: true });
  });
  return holder;
}
