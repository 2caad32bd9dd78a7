import { Registry } from 'prom-client';

/**
 * The service's one Prometheus registry. Each feature registers its own
 * figures in it (plants/plant-metrics.ts, auth/auth-metrics.ts,
 * webhooks/webhook-metrics.ts); /metrics serves it when METRICS_ENABLED is
 * true, and nothing reads it otherwise.
 */
export class MetricsRegistry extends Registry {}
