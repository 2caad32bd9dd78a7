import { type DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { BearerAuthGuard } from './auth/bearer-auth.guard.js';
import { AuthModule } from './auth/auth.module.js';
import { HttpErrorFilter } from './errors/http-error.filter.js';
import { DtoValidationPipe } from './validation/validation.pipe.js';
import { configModule } from './config/config.module.js';
import type { Environment } from './environment.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { LifecycleModule } from './lifecycle/lifecycle.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { PlantsModule } from './plants/plants.module.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { WebhookDispatchModule } from './webhooks/webhook-dispatch.module.js';
import { WebhookStorageModule } from './webhooks/webhook-storage.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

/**
 * The application. Pipe, filter and guards are providers (APP_PIPE,
 * APP_FILTER, APP_GUARD), so every way of building the app, main.ts, the e2e
 * tests and the OpenAPI export, gets the same pipeline. The guards are listed
 * here, in the order they run: authentication first, so that the rate limit
 * counts per token owner.
 *
 * APP_ROLE picks what the instance does: `api` serves the API and sends no
 * webhooks, `worker` sends webhooks and serves only health and metrics, `all`
 * (the default) both.
 */
@Module({})
export class AppModule {
  static forRoot(env: Environment, rootLogger: Logger): DynamicModule {
    // The one reading of the switch: off, neither the quota nor the failure budget is loaded.
    const rateLimited = env.RATE_LIMIT_ENABLED;
    const servesApi = env.APP_ROLE !== 'worker';
    const dispatches = env.APP_ROLE !== 'api';
    return {
      module: AppModule,
      imports: [
        configModule(env),
        LoggingModule.forRoot(rootLogger),
        LifecycleModule,
        DatabaseModule,
        MetricsModule.forRoot(env.METRICS_ENABLED),
        ...(rateLimited ? [RateLimitModule] : []),
        AuthModule.forRoot({ failureBudget: rateLimited }),
        HealthModule,
        ...(servesApi
          ? [PlantsModule.forRoot({ events: WebhookStorageModule }), WebhooksModule]
          : []),
        ...(dispatches ? [WebhookDispatchModule] : []),
      ],
      providers: [
        { provide: APP_GUARD, useClass: BearerAuthGuard },
        // Not registered at all when off: a guard that only skips still runs on every request.
        ...(rateLimited ? [{ provide: APP_GUARD, useClass: RateLimitGuard }] : []),
        { provide: APP_PIPE, useClass: DtoValidationPipe },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
      ],
    };
  }
}
