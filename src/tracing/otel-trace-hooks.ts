import {
  type Attributes,
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from '@opentelemetry/semantic-conventions';
import type { ClientSpanRequest, TraceHooks } from './trace-hooks.js';

const TRACER_NAME = 'plant-store-webhooks';

/** The request's attributes: the URL without its query string or credentials. */
function requestAttributes(request: ClientSpanRequest): Attributes {
  const url = new URL(request.url);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return {
    ...request.attributes,
    [ATTR_HTTP_REQUEST_METHOD]: request.method,
    [ATTR_SERVER_ADDRESS]: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    [ATTR_SERVER_PORT]: port,
    [ATTR_URL_FULL]: `${url.protocol}//${url.host}${url.pathname}`,
  };
}

/** The span context a stored traceparent names, for a link; none when it is absent or invalid. */
function linkTo(traceparent: string | undefined) {
  if (traceparent === undefined) return [];
  const extracted = propagation.extract(ROOT_CONTEXT, { traceparent });
  const spanContext = trace.getSpanContext(extracted);
  return spanContext && trace.isSpanContextValid(spanContext) ? [{ context: spanContext }] : [];
}

/** The hooks of trace-hooks.ts, done with the OpenTelemetry API: installed when the SDK starts. */
export const otelTraceHooks: TraceHooks = {
  currentTraceparent() {
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    return carrier.traceparent;
  },

  inClientSpan(name, linkedTraceparent, request, work) {
    // A root span of its own: a delivery runs long after the create's request
    // ended, so it follows a link to that trace rather than living inside it.
    return trace.getTracer(TRACER_NAME).startActiveSpan(
      name,
      {
        kind: SpanKind.CLIENT,
        root: true,
        links: linkTo(linkedTraceparent),
        attributes: requestAttributes(request),
      },
      async (span) => {
        try {
          const result = await work();
          if (result.status !== undefined) {
            span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.status);
          }
          if (result.status === undefined || result.status < 200 || result.status >= 300) {
            span.setAttribute(
              ATTR_ERROR_TYPE,
              result.status === undefined ? 'request failed' : String(result.status),
            );
            span.setStatus({ code: SpanStatusCode.ERROR, message: result.error });
          }
          return result;
        } catch (error) {
          span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : 'error');
          span.setStatus({ code: SpanStatusCode.ERROR });
          throw error;
        } finally {
          span.end();
        }
      },
    );
  },
};
