import { type DynamicModule, Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';
import { NoMetricsService } from './no-metrics.service.js';

/** Metrics at /metrics, or, with METRICS_ENABLED=false, no route and counters that do nothing. */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(enabled: boolean): DynamicModule {
    return enabled
      ? {
          module: MetricsModule,
          controllers: [MetricsController],
          providers: [MetricsService],
          exports: [MetricsService],
        }
      : {
          module: MetricsModule,
          providers: [{ provide: MetricsService, useClass: NoMetricsService }],
          exports: [MetricsService],
        };
  }
}
