import { Injectable } from '@nestjs/common';

/** How a delivery attempt ended. */
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed' | 'disabled';

/**
 * What the webhook dispatcher counts (injected by it, so that metrics/ knows
 * no feature). WebhookMetricsService implements it; with
 * METRICS_ENABLED=false, NoWebhookMetrics does.
 */
export abstract class WebhookMetrics {
  /** One attempt and how long the receiver took (or the time until it failed). */
  abstract deliveryAttempted(outcome: DeliveryOutcome, seconds: number): void;
  /** How to read the number of pending deliveries when metrics are scraped. */
  abstract countPendingWith(read: () => Promise<number>): void;
}

/** Stands in for WebhookMetricsService when METRICS_ENABLED=false. */
@Injectable()
export class NoWebhookMetrics extends WebhookMetrics {
  override deliveryAttempted(): void {}

  override countPendingWith(): void {}
}
