import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { MetricsRegistry } from '../metrics/metrics-registry.js';

/** What authentication counts, in the service's Prometheus registry. */
@Injectable()
export class AuthMetrics {
  private readonly held: Counter;
  private readonly fairShare: Counter;

  constructor(registry: MetricsRegistry) {
    this.held = new Counter({
      name: 'auth_refusals_held_total',
      help: 'Refusals (401, 429) answered AUTH_REFUSAL_DELAY_MS late: their address was past AUTH_REFUSAL_RATE',
      registers: [registry],
    });
    this.fairShare = new Counter({
      name: 'fair_share_refusals_total',
      help: 'Requests refused with a 429: their owner had FAIR_SHARE_MAX_IN_FLIGHT requests in flight in this instance',
      registers: [registry],
    });
  }

  /** One refusal held back by the pacer (answered AUTH_REFUSAL_DELAY_MS late). */
  refusalHeld(): void {
    this.held.inc();
  }

  /** One request refused with a 429: its owner had FAIR_SHARE_MAX_IN_FLIGHT in flight. */
  fairShareRefused(): void {
    this.fairShare.inc();
  }
}
