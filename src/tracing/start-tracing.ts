import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { register } from 'node:module';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { diag, type Span } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { NodeSDK, resources } from '@opentelemetry/sdk-node';
import {
  ATTR_ERROR_TYPE,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { SECRET_PARAMETERS } from '../logging/log-redaction.js';
import { BetterSqlite3Instrumentation } from './better-sqlite3.instrumentation.js';
import { otelTraceHooks } from './otel-trace-hooks.js';
import { installTraceHooks } from './trace-hooks.js';

/** service.name unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES says otherwise. */
const DEFAULT_SERVICE_NAME = 'plant-store';

/** How long a stopping service waits for its last spans to be exported. */
const FLUSH_TIMEOUT_MS = 2000;

/** Probes and scrapes: a span every few seconds per replica that follows no one's request. */
const UNTRACED_PATHS = ['/health', '/metrics'];

/**
 * instrumentation-http's default list (signed cloud URLs), which its option
 * replaces, and the token parameters the request log redacts too.
 */
const REDACTED_QUERY_PARAMETERS = [
  'AWSAccessKeyId',
  'Signature',
  'sig',
  'X-Goog-Signature',
  ...SECRET_PARAMETERS,
];

const untraced = (request: IncomingMessage): boolean => {
  const path = request.url?.split('?', 1)[0] ?? '';
  return UNTRACED_PATHS.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
};

/**
 * Starts the OpenTelemetry Node SDK for traces, configured by the standard
 * OTEL_* variables (exporter, endpoint, protocol, headers, sampler, resource
 * attributes, batch sizes): see docs/TRACING.md. Run by preload.ts
 * before the application is imported, so that the modules it instruments
 * are patched as they load.
 */
export async function startTracing(): Promise<void> {
  // The service is ESM: its `import pino from 'pino'` goes through Node's ESM
  // loader, where require-in-the-middle does not see it. import-in-the-middle's
  // loader hook does, and with this channel it wraps only the modules an
  // instrumentation asked for, not every module of the app.
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

  const sdk = new NodeSDK({
    // Merged under what the environment detector finds, so OTEL_SERVICE_NAME wins.
    resource: resources
      .defaultResource()
      .merge(resources.resourceFromAttributes({ [ATTR_SERVICE_NAME]: DEFAULT_SERVICE_NAME })),
    // Traces only: metrics are Prometheus's at /metrics, logs are JSON lines on stdout.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: untraced,
        // A webhook delivery has its own client span (otel-trace-hooks.ts), whose
        // URL leaves out the query; no second span, no trace header to the receiver.
        ignoreOutgoingRequestHook: (options) => {
          const headers = typeof options === 'string' ? undefined : options.headers;
          return headers !== undefined && !Array.isArray(headers) && 'webhook-id' in headers;
        },
        redactedQueryParamsServer: REDACTED_QUERY_PARAMETERS,
        applyCustomAttributesOnSpan: (span: Span, _request, response) => {
          const { statusCode } = response as ServerResponse;
          if (statusCode >= 500) span.setAttribute(ATTR_ERROR_TYPE, String(statusCode));
        },
      }),
      // Names the server span by route (`GET /plants`) and adds a span for the
      // route's handler; Fastify's own hooks are not worth a span each.
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        instrumentHooks: false,
        // Its url.path is Fastify's request.url, query included: keep the path only.
        requestHook: (span: Span, request: FastifyRequest) => {
          span.setAttribute(ATTR_URL_PATH, request.url.split('?', 1)[0]);
        },
      }),
      new PgInstrumentation({ requireParentSpan: true }),
      new BetterSqlite3Instrumentation({ requireParentSpan: true }),
      // trace_id and span_id in every log line written inside a span; the lines
      // themselves stay on stdout.
      new PinoInstrumentation({ disableLogSending: true }),
    ],
  });
  sdk.start();
  // Webhook deliveries: the create's traceparent stored with each, and a client span per attempt.
  installTraceHooks(otelTraceHooks);

  // The service exits right after closing its server (SIGTERM): the spans
  // still in the batch go out first, for FLUSH_TIMEOUT_MS at most. An
  // unreachable collector (the exporter retries for seconds) must neither
  // hold the shutdown past its own deadline nor make it fail.
  subscribe('fastify.initialization', (message) => {
    (message as { fastify: FastifyInstance }).fastify.addHook('onClose', async () => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        sdk
          .shutdown()
          .catch((error: unknown) => diag.warn('tracing: last spans not exported', error)),
        new Promise((resolve) => (timer = setTimeout(resolve, FLUSH_TIMEOUT_MS))),
      ]);
      clearTimeout(timer);
    });
  });

  await waitForAllMessagesAcknowledged();
}
