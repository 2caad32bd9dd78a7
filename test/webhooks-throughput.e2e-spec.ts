import autocannon from 'autocannon';
import { describe, expect, it } from 'vitest';
import { onDemand } from './support/on-demand.js';
import { databaseKinds } from './support/test-database.js';
import { eventually } from './support/eventually.js';
import {
  subscribeOver,
  untilNothingPendingAt,
  useWebhookService,
  WEBHOOK_TOKEN as TOKEN,
} from './support/webhook-load.js';

/**
 * A measurement, run on demand (it loads the machine for a minute):
 *   npm run -s build && WEBHOOK_THROUGHPUT=1 npx vitest run test/webhooks-throughput.e2e-spec.ts
 * Create throughput of the built service without and with one subscription,
 * in alternating rounds so that drift on a shared machine falls on both, and
 * the delivery figures of the subscribed rounds: every event delivered once.
 */
const SECONDS = Number(process.env.WEBHOOK_THROUGHPUT_SECONDS ?? 8);

const asked = onDemand('WEBHOOK_THROUGHPUT', 'test/webhooks-throughput.e2e-spec.ts');

describe.skipIf(!asked).each(databaseKinds())(
  'create throughput with and without a webhook subscription on %s (on demand: WEBHOOK_THROUGHPUT=1)',
  (kind) => {
    const run = useWebhookService(kind, {
      WEBHOOK_TIMEOUT_MS: '10000',
      WEBHOOK_LEASE_MS: '60000',
    });

    let nextId = 0;
    /** Creates for SECONDS; names start with `prefix` so that the list tells the rounds apart. */
    const createsFor = async (prefix: 'u' | 's') => {
      const result = await autocannon({
        url: run.current.service.url,
        connections: 16,
        duration: SECONDS,
        requests: [
          {
            method: 'POST',
            path: '/plants',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            setupRequest: (request) => {
              nextId += 1;
              return { ...request, body: `{"id":${nextId},"name":"${prefix}${nextId}"}` };
            },
          },
        ],
      });
      expect(result.non2xx + result.errors).toBe(0);
      return result.requests.average;
    };

    /** The names of the stored plants created while subscribed. */
    const subscribedPlants = async (): Promise<string[]> => {
      const response = await fetch(`${run.current.service.url}/plants`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const plants = (await response.json()) as Array<{ name: string }>;
      return plants.map((plant) => plant.name).filter((name) => name.startsWith('s'));
    };

    it('measures creates/s and delivers every subscribed create exactly once', async () => {
      const figures = { without: [] as number[], with: [] as number[] };
      const delivered = () =>
        new Set(
          run.current.receiver.received.map((r) => (JSON.parse(r.body) as { name: string }).name),
        );
      for (let round = 0; round < 2; round++) {
        figures.without.push(await createsFor('u'));
        const id = await subscribeOver(run.current.service.url, TOKEN, run.current.receiver.url);
        figures.with.push(await createsFor('s'));
        const stored = await subscribedPlants();
        await eventually(
          () => delivered().size >= stored.length,
          () => `${delivered().size} of ${stored.length} events delivered`,
          120_000,
        );
        // Every delivery recorded: none is sent again after this (a duplicate would be by now).
        await untilNothingPendingAt(run.current.service.url, 60_000);
        await fetch(`${run.current.service.url}/webhooks/${id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${TOKEN}` },
        });
      }
      const stored = await subscribedPlants();
      const names = delivered();
      const events = new Set(run.current.receiver.received.map((r) => r.headers['webhook-id']))
        .size;
      const mean = (values: number[]) => Math.round(values.reduce((a, b) => a + b) / values.length);
      const report = {
        kind,
        createsPerSecondWithout: figures.without,
        createsPerSecondWithOneSubscription: figures.with,
        meanWithout: mean(figures.without),
        meanWith: mean(figures.with),
        subscribedCreates: stored.length,
        events,
        deliveries: run.current.receiver.received.length,
        duplicates: run.current.receiver.received.length - events,
        lost: stored.filter((name) => !names.has(name)).length,
        // Plants created without a subscription must have made no event.
        unsubscribedEvents: [...names].filter((name) => name.startsWith('u')).length,
      };
      console.info(JSON.stringify(report));
      expect(events).toBe(stored.length);
      expect({
        duplicates: report.duplicates,
        lost: report.lost,
        unsubscribedEvents: report.unsubscribedEvents,
      }).toEqual({ duplicates: 0, lost: 0, unsubscribedEvents: 0 });
    }, 300_000);
  },
);
