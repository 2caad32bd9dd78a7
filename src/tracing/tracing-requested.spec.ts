import { describe, expect, it } from 'vitest';
import { tracingRequested } from './tracing-requested.js';

describe('tracingRequested', () => {
  it('is off without any OTEL_* variable', () => {
    expect(tracingRequested({})).toBe(false);
    expect(
      tracingRequested({ OTEL_SERVICE_NAME: 'plant-store', OTEL_TRACES_SAMPLER: 'always_on' }),
    ).toBe(false);
  });

  it('is on with an OTLP exporter or an OTLP endpoint', () => {
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: ' OTLP , console' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(
      tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }),
    ).toBe(true);
  });

  it('stays off when the exporter is none, whatever the endpoint', () => {
    expect(
      tracingRequested({
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      }),
    ).toBe(false);
  });

  it('stays off when the SDK is disabled, and for empty values', () => {
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(
      false,
    );
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(
      true,
    );
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: '', OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(
      false,
    );
  });
});
