import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsService } from './metrics.service.js';
import { type DeliveryOutcome, WebhookMetrics } from './webhook-metrics.js';

/** Webhook delivery figures, in the service's Prometheus registry. */
@Injectable()
export class WebhookMetricsService extends WebhookMetrics {
  private readonly attempts: Counter<'outcome'>;
  private readonly latency: Histogram;
  private readPending: () => Promise<number> = async () => 0;

  constructor(metrics: MetricsService) {
    super();
    const registers = [metrics.registry];
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

  override deliveryAttempted(outcome: DeliveryOutcome, seconds: number): void {
    this.attempts.inc({ outcome });
    this.latency.observe(seconds);
  }

  override countPendingWith(read: () => Promise<number>): void {
    this.readPending = read;
  }
}
