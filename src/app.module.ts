import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './auth/auth.module.js';
import { HttpErrorFilter } from './common/errors/http-error.filter.js';
import { createValidationPipe } from './common/validation/validation.pipe.js';
import { configModule } from './config/config.module.js';
import type { Environment } from './config/environment.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { PlantsModule } from './plants/plants.module.js';

/**
 * The application. Pipe, filter and guard are providers (APP_PIPE,
 * APP_FILTER, and APP_GUARD in AuthModule), so every way of building the
 * app, main.ts, the e2e tests and the OpenAPI export, gets the same pipeline.
 */
@Module({})
export class AppModule {
  static forRoot(env: Environment): DynamicModule {
    return {
      module: AppModule,
      imports: [configModule(env), DatabaseModule, AuthModule, HealthModule, PlantsModule],
      providers: [
        { provide: APP_PIPE, useFactory: createValidationPipe },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
      ],
    };
  }
}
