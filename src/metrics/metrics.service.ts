import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Gauge, Histogram } from 'prom-client';
import { type PoolFigures, PoolGauges } from '../database/pool-gauges.js';
import { MetricsRegistry } from './metrics-registry.js';

type Label = 'method' | 'route' | 'status';

/**
 * The figures of the service as a whole, in its Prometheus registry: request
 * durations, pool figures, process metrics (each feature adds its own).
 */
@Injectable()
export class MetricsService {
  private readonly requestDuration: Histogram<Label>;

  /** Bounded: one entry per method, route pattern and status the app has answered. */
  private readonly durationSeries = new Map<string, Histogram.Internal<Label>>();

  constructor(
    readonly registry: MetricsRegistry,
    private readonly pool: PoolGauges,
  ) {
    this.requestDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route pattern and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    collectDefaultMetrics({ register: registry });
    this.registerPoolGauges();
  }

  /**
   * One answered request, called by the pipeline's onResponse hook
   * (app.setup.ts). `route` is the pattern, not the URL: one series per
   * route, whatever the ids.
   */
  observeRequest(method: string, route: string | undefined, status: number, ms: number): void {
    this.durationOf(method, route ?? 'unmatched', status).observe(ms / 1000);
  }

  /**
   * The histogram series of one method, route and status, looked up once:
   * `observe(labels, value)` hashes the label object on every call.
   */
  private durationOf(method: string, route: string, status: number): Histogram.Internal<Label> {
    const key = `${method} ${route} ${status}`;
    let series = this.durationSeries.get(key);
    if (!series) {
      series = this.requestDuration.labels({ method, route, status: String(status) });
      this.durationSeries.set(key, series);
    }
    return series;
  }

  private registerPoolGauges(): void {
    const figures: Array<[string, string, keyof PoolFigures]> = [
      ['db_pool_connections_total', 'PostgreSQL pool: open connections', 'total'],
      ['db_pool_connections_idle', 'PostgreSQL pool: idle connections', 'idle'],
      ['db_pool_requests_waiting', 'PostgreSQL pool: requests waiting for a connection', 'waiting'],
    ];
    if (!this.pool.pooled) return;
    const pool = this.pool;
    for (const [name, help, figure] of figures) {
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          const current = pool.figures();
          if (current) this.set(current[figure]);
        },
      });
    }
  }
}
