import { Injectable } from '@nestjs/common';

/**
 * What features count (injected by PlantsService). MetricsService implements
 * it; with METRICS_ENABLED=false, NoMetrics does, so a counter added here and
 * forgotten in either fails to compile rather than at run time.
 */
export abstract class PlantMetrics {
  abstract plantCreated(): void;
  abstract plantDeleted(): void;
}

/** Stands in for MetricsService when METRICS_ENABLED=false. */
@Injectable()
export class NoMetrics extends PlantMetrics {
  override plantCreated(): void {}

  override plantDeleted(): void {}
}
