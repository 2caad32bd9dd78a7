import { type DynamicModule, Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller.js';
import { MetricsRegistry } from './metrics-registry.js';
import { MetricsService } from './metrics.service.js';

/**
 * The Prometheus registry every feature registers its figures in, served at
 * /metrics with the request durations, pool figures and process metrics; with
 * METRICS_ENABLED=false, no route and nothing but the features' counters,
 * which nobody reads. The request-duration histogram is observed by the
 * pipeline (app.setup.ts) through MetricsService.observeRequest.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(enabled: boolean): DynamicModule {
    return {
      module: MetricsModule,
      controllers: enabled ? [MetricsController] : [],
      providers: [MetricsRegistry, ...(enabled ? [MetricsService] : [])],
      exports: [MetricsRegistry],
    };
  }
}
