import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killHard, type ServiceProcess, startService } from './support/service-process.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { eventually } from './support/eventually.js';
import {
  createPlants,
  plantIdOf,
  subscribeOver,
  WEBHOOK_SERVICE_ENV,
  WEBHOOK_TOKEN as TOKEN,
} from './support/webhook-load.js';
import { startReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const PLANTS = 300;

describe.each(databaseKinds())(
  'webhook events through kill -9 of the built service on %s',
  (kind) => {
    let database: TestDatabase;
    let cwd: string;
    let receiver: WebhookReceiver;
    let service: ServiceProcess | undefined;
    beforeAll(async () => {
      database = await createTestDatabase(kind);
      cwd = await mkdtemp(join(tmpdir(), 'plant-store-webhooks-'));
      receiver = await startReceiver(() => 'hang');
    });
    afterAll(async () => {
      if (service) await killHard(service);
      await receiver.close();
      await database.drop();
      await rm(cwd, { recursive: true, force: true });
    });

    it(`delivers the event of every create acknowledged before the kill, after the restart (${PLANTS} creates)`, async () => {
      const env = { ...WEBHOOK_SERVICE_ENV, DATABASE_URL: database.url };
      service = await startService(cwd, env);
      // Both opt-ins are said at start-up.
      expect(service.output()).toMatch(/WEBHOOK_ALLOW_HTTP=true/);
      expect(service.output()).toMatch(/WEBHOOK_ALLOW_PRIVATE_TARGETS=true/);
      await subscribeOver(service.url, TOKEN, receiver.url);
      // The receiver does not answer yet: nothing can be delivered before the kill.
      const ids = Array.from({ length: PLANTS }, (_, i) => i + 1);
      const acknowledged = await createPlants([service.url], TOKEN, ids);
      await killHard(service);
      expect(acknowledged.size).toBe(PLANTS);
      const before = receiver.received.length;

      receiver.answer = () => 200;
      service = await startService(cwd, env);
      const delivered = () => new Set(receiver.received.slice(before).map(plantIdOf));
      await eventually(
        () => delivered().size >= PLANTS,
        () => `after the restart ${delivered().size} of ${PLANTS} events were delivered`,
      );
      expect([...delivered()].sort((a, b) => a - b)).toEqual(ids);
      // One event per plant: every delivery of a plant carries the same webhook-id.
      const eventIds = new Map<number, Set<string>>();
      for (const request of receiver.received) {
        const id = plantIdOf(request);
        eventIds.set(
          id,
          (eventIds.get(id) ?? new Set()).add(String(request.headers['webhook-id'])),
        );
      }
      expect([...eventIds.values()].every((set) => set.size === 1)).toBe(true);
      expect(eventIds.size).toBe(PLANTS);
    });
  },
);
