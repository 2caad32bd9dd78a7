import { type DynamicModule, Global, Module } from '@nestjs/common';
import { AuthMetrics, NoAuthMetrics } from './auth-metrics.js';
import { AuthMetricsService } from './auth-metrics.service.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';
import { NoMetrics, PlantMetrics } from './plant-metrics.js';
import { NoWebhookMetrics, WebhookMetrics } from './webhook-metrics.js';
import { WebhookMetricsService } from './webhook-metrics.service.js';

/**
 * Metrics at /metrics, or, with METRICS_ENABLED=false, no route and counters
 * that do nothing. The request-duration histogram is observed by the pipeline
 * (app.setup.ts) through MetricsService.observeRequest.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(enabled: boolean): DynamicModule {
    return enabled
      ? {
          module: MetricsModule,
          controllers: [MetricsController],
          providers: [
            MetricsService,
            { provide: PlantMetrics, useExisting: MetricsService },
            { provide: WebhookMetrics, useClass: WebhookMetricsService },
            { provide: AuthMetrics, useClass: AuthMetricsService },
          ],
          exports: [PlantMetrics, WebhookMetrics, AuthMetrics],
        }
      : {
          module: MetricsModule,
          providers: [
            { provide: PlantMetrics, useClass: NoMetrics },
            { provide: WebhookMetrics, useClass: NoWebhookMetrics },
            { provide: AuthMetrics, useClass: NoAuthMetrics },
          ],
          exports: [PlantMetrics, WebhookMetrics, AuthMetrics],
        };
  }
}
