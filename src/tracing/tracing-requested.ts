/** The environment as the OpenTelemetry SDK reads it: plain strings, unset or empty alike. */
export type OtelEnvironment = Readonly<Record<string, string | undefined>>;

const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '');

const isSet = (value: string | undefined): boolean => (value ?? '').trim() !== '';

/**
 * Whether the standard OpenTelemetry variables ask for traces: an exporter
 * other than `none` in OTEL_TRACES_EXPORTER, or, with that variable unset
 * (the SDK then exports OTLP), an OTLP endpoint. OTEL_SDK_DISABLED=true
 * turns everything off, as the SDK specification says.
 */
export function tracingRequested(env: OtelEnvironment): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = list(env.OTEL_TRACES_EXPORTER);
  if (exporters.length > 0) return exporters.some((exporter) => exporter !== 'none');
  return isSet(env.OTEL_EXPORTER_OTLP_ENDPOINT) || isSet(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}
