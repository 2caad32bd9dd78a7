import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module, RequestMethod } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { LoggerModule } from 'nestjs-pino';
import type { Environment } from '../config/environment.js';
import { redactUrl } from './log-redaction.js';
import { loggedOwner } from './request-log-fields.js';
import { routePatternOf } from './request-context.hook.js';

/**
 * Structured logs with pino: one JSON line per request (method, route,
 * status, latency, owner, request id) and every Nest log line in the same
 * format. The request id and route come from installRequestContext (set in
 * app.setup.ts). Headers are never logged, so neither is Authorization.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => ({
        // nestjs-pino's default route, '{/*splat}', matches nothing on Nest 12's Fastify adapter.
        forRoutes: [{ path: '*path', method: RequestMethod.ALL }],
        pinoHttp: {
          level: config.get('LOG_LEVEL', { infer: true }),
          transport:
            config.get('NODE_ENV', { infer: true }) === 'development'
              ? { target: 'pino-pretty', options: { singleLine: true, destination: 1 } }
              : undefined,
          customProps: (request: IncomingMessage) => ({ owner: loggedOwner(request) }),
          customLogLevel: (_request, response, error) =>
            response.statusCode >= 500 || error ? 'error' : 'info',
          serializers: {
            // pino-http hands serializers a summary of the request; `raw` is the request itself.
            req: (request: {
              id?: unknown;
              method?: string;
              url?: string;
              raw: IncomingMessage;
            }) => ({
              id: request.id,
              method: request.method,
              url: redactUrl(request.url ?? ''),
              route: routePatternOf(request.raw),
            }),
            res: (response: ServerResponse) => ({ statusCode: response.statusCode }),
          },
          // Defence in depth: nothing logs headers, and if something ever does, not these.
          redact: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'],
        },
      }),
    }),
  ],
})
export class LoggingModule {}
