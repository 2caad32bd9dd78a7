import { ClassSerializerInterceptor, Module, ValidationPipe } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { TypeOrmModule } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { LoggerModule } from 'nestjs-pino';
import { AuthModule } from './auth/auth.module.js';
import { dataSourceOptions } from './database/data-source-options.js';
import { HttpExceptionFilter } from './http-exception.filter.js';
import { MetricsInterceptor } from './metrics/metrics.interceptor.js';
import { PlantsModule } from './plants/plants.module.js';
import { settings } from './settings.js';

@Module({
  imports: [
    LoggerModule.forRoot({
      pinoHttp: {
        level: settings.logLevel,
        // pino-http's README: the client's X-Request-Id, else a new one, echoed.
        genReqId: (request, response) => {
          const id = request.headers['x-request-id'] ?? randomUUID();
          response.setHeader('X-Request-Id', id);
          return id;
        },
      },
    }),
    TypeOrmModule.forRoot(dataSourceOptions()),
    ThrottlerModule.forRoot([{ ttl: settings.rateLimitWindowMs, limit: settings.rateLimitMax }]),
    AuthModule,
    PlantsModule,
  ],
  providers: [
    { provide: APP_GUARD, useClass: ThrottlerGuard },
    {
      provide: APP_PIPE,
      useValue: new ValidationPipe({
        whitelist: true,
        forbidNonWhitelisted: true,
        transform: true,
      }),
    },
    { provide: APP_INTERCEPTOR, useClass: ClassSerializerInterceptor },
    { provide: APP_INTERCEPTOR, useClass: MetricsInterceptor },
    { provide: APP_FILTER, useClass: HttpExceptionFilter },
  ],
})
export class AppModule {}
