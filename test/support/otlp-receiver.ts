import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from './eventually.js';

/** An OTLP AnyValue in the JSON encoding (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding). */
interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
  bytesValue?: string;
}

interface KeyValue {
  key: string;
  value?: AnyValue;
}

/** ExportTraceServiceRequest as OTLP/HTTP JSON carries it: ids in hex, enums as numbers. */
interface ExportTraceServiceRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
        events?: Array<{ name: string; attributes?: KeyValue[] }>;
        links?: Array<{ traceId: string; spanId: string; attributes?: KeyValue[] }>;
        status?: { code?: number; message?: string };
      }>;
    }>;
  }>;
}

type Attributes = Record<string, unknown>;

/** OTLP's SpanKind (the API's plus one) and StatusCode. */
export const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;
export const STATUS_CODE = { UNSET: 0, OK: 1, ERROR: 2 } as const;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  scope: string;
  status: { code: number; message?: string };
  attributes: Attributes;
  events: Array<{ name: string; attributes: Attributes }>;
  links: Array<{ traceId: string; spanId: string; attributes: Attributes }>;
  resource: Attributes;
}

export interface ReceivedRequest {
  path: string;
  contentType: string;
  body: Buffer;
}

function valueOf(value: AnyValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  if (value.kvlistValue) return attributesOf(value.kvlistValue.values);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.bytesValue;
}

function attributesOf(list: KeyValue[] | undefined): Attributes {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

/**
 * An OTLP/HTTP collector on 127.0.0.1 for the tests: it answers every export
 * with 200, keeps each request's raw body, and reads the spans of JSON
 * exports (OTEL_EXPORTER_OTLP_PROTOCOL=http/json); protobuf bodies are kept
 * as bytes.
 */
export class OtlpReceiver {
  readonly requests: ReceivedRequest[] = [];
  readonly spans: ReceivedSpan[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        const contentType = request.headers['content-type'] ?? '';
        this.requests.push({ path: request.url ?? '', contentType, body });
        if (contentType.startsWith('application/json')) {
          this.spans.push(
            ...spansOf(JSON.parse(body.toString('utf8')) as ExportTraceServiceRequest),
          );
          response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
        } else {
          response.writeHead(200, { 'Content-Type': contentType }).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Waits until `found` returns a value for the spans received so far. */
  waitFor<T>(found: (spans: ReceivedSpan[]) => T | undefined, timeoutMs = 10_000): Promise<T> {
    return eventually(
      () => found(this.spans),
      () => `spans: ${this.spans.map((s) => s.name).join(', ')}`,
      timeoutMs,
    );
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

function spansOf(request: ExportTraceServiceRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        scope: scopeSpans.scope?.name ?? '',
        status: { code: span.status?.code ?? 0, message: span.status?.message },
        attributes: attributesOf(span.attributes),
        events: (span.events ?? []).map((event) => ({
          name: event.name,
          attributes: attributesOf(event.attributes),
        })),
        links: (span.links ?? []).map((link) => ({
          traceId: link.traceId,
          spanId: link.spanId,
          attributes: attributesOf(link.attributes),
        })),
        resource,
      })),
    );
  });
}
