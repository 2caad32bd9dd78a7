import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { MetricsRegistry } from '../metrics/metrics-registry.js';

/** What the plants feature counts, in the service's Prometheus registry. */
@Injectable()
export class PlantMetrics {
  private readonly created: Counter;
  private readonly deleted: Counter;

  constructor(registry: MetricsRegistry) {
    this.created = new Counter({
      name: 'plants_created_total',
      help: 'Plants created (exact replays not counted)',
      registers: [registry],
    });
    this.deleted = new Counter({
      name: 'plants_deleted_total',
      help: 'Plants deleted',
      registers: [registry],
    });
  }

  plantCreated(): void {
    this.created.inc();
  }

  plantDeleted(): void {
    this.deleted.inc();
  }
}
