import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsRegistry } from '../metrics/metrics-registry.js';

/** How a delivery attempt ended. */
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed' | 'disabled';

/** Webhook delivery figures, in the service's Prometheus registry. */
@Injectable()
export class WebhookMetrics {
  private readonly attempts: Counter<'outcome'>;
  private readonly latency: Histogram;
  private readPending: () => Promise<number> = async () => 0;

  constructor(registry: MetricsRegistry) {
    const registers = [registry];
    this.attempts = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (delivered, retry, failed, disabled)',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.latency = new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Time from sending a webhook to its answer (or failure)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    const pending = () => this.readPending();
    new Gauge({
      name: 'webhook_deliveries_pending',
      help: 'Webhook deliveries waiting for a first attempt or a retry (all instances)',
      registers,
      async collect() {
        this.set(await pending());
      },
    });
  }

  /** One attempt and how long the receiver took (or the time until it failed). */
  deliveryAttempted(outcome: DeliveryOutcome, seconds: number): void {
    this.attempts.inc({ outcome });
    this.latency.observe(seconds);
  }

  /** How to read the number of pending deliveries when metrics are scraped. */
  countPendingWith(read: () => Promise<number>): void {
    this.readPending = read;
  }
}
