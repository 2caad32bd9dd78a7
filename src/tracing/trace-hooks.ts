/**
 * The two places the application touches tracing itself, as hooks that do
 * nothing until start-tracing.ts installs real ones: with tracing off, no
 * OpenTelemetry module is loaded, and these stay no-ops. Nothing here may
 * import OpenTelemetry.
 */

/** HTTP client attributes of a delivery span, known before the request is sent. */
export interface ClientSpanRequest {
  method: string;
  /** The target URL; its query string is never recorded. */
  url: string;
  /** Extra attributes (an id, never a secret or a signature). */
  attributes?: Record<string, string>;
}

/** What the work inside a client span reports back: the status, or an error. */
export interface ClientSpanResult {
  status?: number;
  error?: string;
}

export interface TraceHooks {
  /** The active context's W3C traceparent, when a sampled or unsampled span is active. */
  currentTraceparent(): string | undefined;
  /** Runs `work` in a client span linked to `linkedTraceparent` (when given). */
  inClientSpan<T extends ClientSpanResult>(
    name: string,
    linkedTraceparent: string | undefined,
    request: ClientSpanRequest,
    work: () => Promise<T>,
  ): Promise<T>;
}

const noHooks: TraceHooks = {
  currentTraceparent: () => undefined,
  inClientSpan: (_name, _linked, _request, work) => work(),
};

/**
 * Kept on the global object, not in this module: the tracing preload runs the
 * unbundled build (dist/tracing/) and the application runs the bundle
 * (dist/bundle/main.js), so each has its own copy of this module.
 */
const INSTALLED = Symbol.for('plant-store.trace-hooks');
const registry = globalThis as { [INSTALLED]?: TraceHooks };

const installed = (): TraceHooks => registry[INSTALLED] ?? noHooks;

/** Called once by start-tracing.ts when the SDK has started. */
export function installTraceHooks(hooks: TraceHooks): void {
  registry[INSTALLED] = hooks;
}

export function currentTraceparent(): string | undefined {
  return installed().currentTraceparent();
}

export function inClientSpan<T extends ClientSpanResult>(
  name: string,
  linkedTraceparent: string | undefined,
  request: ClientSpanRequest,
  work: () => Promise<T>,
): Promise<T> {
  return installed().inClientSpan(name, linkedTraceparent, request, work);
}
