import { Injectable } from '@nestjs/common';

/**
 * What authentication counts (injected by AuthModule into its refusal pacer,
 * so that metrics/ knows no feature). AuthMetricsService implements it; with
 * METRICS_ENABLED=false, NoAuthMetrics does.
 */
export abstract class AuthMetrics {
  /** One refusal held back by the pacer (answered AUTH_REFUSAL_DELAY_MS late). */
  abstract refusalHeld(): void;
  /** One request refused with a 429: its owner had FAIR_SHARE_MAX_IN_FLIGHT in flight. */
  abstract fairShareRefused(): void;
}

/** Stands in for AuthMetricsService when METRICS_ENABLED=false. */
@Injectable()
export class NoAuthMetrics extends AuthMetrics {
  override refusalHeld(): void {}
  override fairShareRefused(): void {}
}
