import { Injectable } from '@nestjs/common';

/** Stands in for MetricsService when METRICS_ENABLED=false. */
@Injectable()
export class NoMetricsService {
  plantCreated(): void {}

  plantDeleted(): void {}
}
