import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { Histogram } from 'prom-client';
import type { Observable } from 'rxjs';

const requestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
});

/** Observes every handled request's duration once its answer is written. */
@Injectable()
export class MetricsInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const end = requestDuration.startTimer({
      method: request.method,
      route: (request.route as { path?: string } | undefined)?.path ?? 'unmatched',
    });
    response.once('finish', () => end({ status: response.statusCode }));
    return next.handle();
  }
}
