import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { AuthMetrics } from './auth-metrics.js';
import { MetricsService } from './metrics.service.js';

/** Authentication figures, in the service's Prometheus registry. */
@Injectable()
export class AuthMetricsService extends AuthMetrics {
  private readonly held: Counter;
  private readonly fairShare: Counter;

  constructor(metrics: MetricsService) {
    super();
    this.held = new Counter({
      name: 'auth_refusals_held_total',
      help: 'Refusals (401, 429) answered AUTH_REFUSAL_DELAY_MS late: their address was past AUTH_REFUSAL_RATE',
      registers: [metrics.registry],
    });
    this.fairShare = new Counter({
      name: 'fair_share_refusals_total',
      help: 'Requests refused with a 429: their owner had FAIR_SHARE_MAX_IN_FLIGHT requests in flight in this instance',
      registers: [metrics.registry],
    });
  }

  override refusalHeld(): void {
    this.held.inc();
  }

  override fairShareRefused(): void {
    this.fairShare.inc();
  }
}
