import { beforeAll, describe, expect, it } from 'vitest';
import { tokenCli } from './support/service-process.js';
import { onDemand } from './support/on-demand.js';
import { databaseKinds } from './support/test-database.js';
import { eventually } from './support/eventually.js';
import {
  createPlants,
  subscribeOver,
  useWebhookService,
  WEBHOOK_TOKEN as FAN_OUT_TOKEN,
} from './support/webhook-load.js';

/**
 * A measurement, run on demand (not timed in CI):
 *   npm run -s build && WEBHOOK_FANOUT=1 npx vitest run test/webhooks-fanout.e2e-spec.ts
 * The built service in production mode; one owner fills WEBHOOK_MAX_SUBSCRIPTIONS
 * (20) with subscriptions to a local receiver. It prints the cost of one
 * create with 0, 1 and 20 subscriptions (sequential creates, milliseconds),
 * and the latency of another owner's GET /plants?limit=1, asked in a loop
 * while the first owner sends bursts of 10 concurrent creates and the
 * dispatcher delivers their 200 events. With each list figure, the service's
 * own CPU time and its longest event-loop delay over those bursts (from
 * /metrics), which other processes on the machine disturb less than latencies.
 */
const CREATES_PER_STEP = 40;
const BURSTS = 5;

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)].toFixed(1),
  );
};

/** The service's CPU seconds and the longest event-loop delay since the previous scrape. */
const scrape = async (serviceUrl: string): Promise<{ cpuSeconds: number; lagMaxMs: number }> => {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)![1]);
  return {
    cpuSeconds: value('process_cpu_seconds_total'),
    lagMaxMs: Math.round(value('nodejs_eventloop_lag_max_seconds') * 1000),
  };
};

const asked = onDemand('WEBHOOK_FANOUT', 'test/webhooks-fanout.e2e-spec.ts');

describe.skipIf(!asked).each(databaseKinds())(
  'webhook fan-out with the subscription cap full on %s (on demand: WEBHOOK_FANOUT=1)',
  (kind) => {
    const run = useWebhookService(kind, { LOG_LEVEL: 'info' });
    let otherToken: string;
    beforeAll(async () => {
      const created = await tokenCli(['create', '--owner', 'other'], {
        NODE_ENV: 'production',
        DATABASE_URL: run.current.database.url,
      });
      expect(created.code, created.stderr).toBe(0);
      otherToken = created.stdout.trim();
    });

    let nextId = 0;
    const ids = (count: number) => Array.from({ length: count }, () => ++nextId);
    /** Milliseconds per create, one at a time, and once every event so far is delivered. */
    const createCost = async (expectedEvents: number): Promise<number> => {
      const times: number[] = [];
      for (const id of ids(CREATES_PER_STEP)) {
        const started = performance.now();
        await createPlants([run.current.service.url], FAN_OUT_TOKEN, [id], 1);
        times.push(performance.now() - started);
      }
      await eventually(
        () => run.current.receiver.received.length >= expectedEvents,
        () => `${run.current.receiver.received.length} of ${expectedEvents} events delivered`,
        120_000,
      );
      return percentile(times, 50);
    };

    /**
     * Latencies of the other owner's GET /plants?limit=1, asked in a loop
     * during BURSTS runs of `load`; the service's CPU milliseconds and its
     * longest event-loop delay meanwhile.
     */
    const listLatenciesDuring = async (
      load: () => Promise<unknown>,
    ): Promise<{ latencies: number[]; cpuMs: number; lagMaxMs: number }> => {
      const before = await scrape(run.current.service.url);
      const latencies: number[] = [];
      for (let burst = 0; burst < BURSTS; burst++) {
        let done = false;
        const lister = (async () => {
          while (!done) {
            const started = performance.now();
            const response = await fetch(`${run.current.service.url}/plants?limit=1`, {
              headers: { authorization: `Bearer ${otherToken}` },
            });
            await response.text();
            latencies.push(performance.now() - started);
            expect(response.status).toBe(200);
          }
        })();
        await load();
        done = true;
        await lister;
      }
      const after = await scrape(run.current.service.url);
      const cpuMs = Math.round((after.cpuSeconds - before.cpuSeconds) * 1000);
      return { latencies, cpuMs, lagMaxMs: after.lagMaxMs };
    };

    it("keeps a create cheap and another owner's list fast with 20 subscriptions", async () => {
      const cost: Record<string, number> = {};
      cost['0'] = await createCost(0);
      await subscribeOver(
        run.current.service.url,
        FAN_OUT_TOKEN,
        `${run.current.receiver.url}?s=0`,
      );
      cost['1'] = await createCost(CREATES_PER_STEP);
      for (let s = 1; s < 20; s++) {
        await subscribeOver(
          run.current.service.url,
          FAN_OUT_TOKEN,
          `${run.current.receiver.url}?s=${s}`,
        );
      }
      cost['20'] = await createCost(CREATES_PER_STEP * 21);

      // Without fan-out first (a second owner with no subscription makes the
      // same bursts), so that the figure with it can be read against the machine's load.
      const baseline = await listLatenciesDuring(() =>
        createPlants([run.current.service.url], otherToken, ids(10), 10),
      );
      let events = run.current.receiver.received.length;
      const fanOut = await listLatenciesDuring(async () => {
        await createPlants([run.current.service.url], FAN_OUT_TOKEN, ids(10), 10);
        events += 200;
        await eventually(
          () => run.current.receiver.received.length >= events,
          () => `${run.current.receiver.received.length} of ${events} events delivered`,
          120_000,
        );
      });
      const latencies = fanOut.latencies;
      const report = {
        kind,
        createMedianMsBySubscriptions: cost,
        listP99MsWithoutFanOut: percentile(baseline.latencies, 99),
        serviceCpuMsWithoutFanOut: baseline.cpuMs,
        eventLoopLagMaxMsWithoutFanOut: baseline.lagMaxMs,
        serviceCpuMsWithFanOut: fanOut.cpuMs,
        eventLoopLagMaxMsWithFanOut: fanOut.lagMaxMs,
        otherOwnerListSamples: latencies.length,
        otherOwnerListP50Ms: percentile(latencies, 50),
        otherOwnerListP99Ms: percentile(latencies, 99),
        otherOwnerListMaxMs: percentile(latencies, 100),
      };
      console.info(JSON.stringify(report));
      // The goal is a p99 under 100 ms; on a shared machine the load adds to both sides.
      expect(report.otherOwnerListP99Ms).toBeLessThan(100 + report.listP99MsWithoutFanOut);
    }, 600_000);
  },
);
