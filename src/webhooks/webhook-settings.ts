import { ConfigService } from '@nestjs/config';
import type { WebhookVariables } from './webhook.variables.js';
import { parseDuration, parseRetrySchedule } from './retry-schedule.js';
import type { ProcessVariables } from '../config/process.variables.js';

/** How long, at most, shutdown lets deliveries in flight go on. */
const SHUTDOWN_GRACE_MS = 5000;

/** The dispatcher's configuration, read once from the validated environment. */
export class WebhookSettings {
  constructor(
    /** Waits before the 2nd, 3rd… attempt; after the last, a delivery is failed. */
    readonly retrySchedule: number[],
    readonly timeoutMs: number,
    readonly allowHttp: boolean,
    readonly allowPrivateTargets: boolean,
    readonly pollIntervalMs: number,
    readonly concurrency: number,
    /** Deliveries in flight to one subscription, in one instance. */
    readonly concurrencyPerSubscription: number,
    readonly leaseMs: number,
    /** Subscriptions one owner may have; the next create is a 409. */
    readonly maxSubscriptions: number,
    /** How long a rotated-out secret still signs deliveries. */
    readonly secretOverlapMs: number,
    /** How long a finished (delivered or failed) delivery is kept. */
    readonly retentionMs: number,
    /** At shutdown, how long deliveries in flight may go on before their claims are given back. */
    readonly shutdownGraceMs: number,
  ) {}

  /** The schedule's longest wait: the most a receiver's Retry-After holds a delivery back. */
  get longestRetryWaitMs(): number {
    return Math.max(...this.retrySchedule);
  }

  static fromConfig(
    config: ConfigService<WebhookVariables & ProcessVariables, true>,
  ): WebhookSettings {
    const get = <K extends keyof (WebhookVariables & ProcessVariables)>(
      key: K,
    ): (WebhookVariables & ProcessVariables)[K] => config.get(key, { infer: true });
    const timeoutMs = get('WEBHOOK_TIMEOUT_MS');
    return new WebhookSettings(
      parseRetrySchedule(get('WEBHOOK_RETRY_SCHEDULE')),
      timeoutMs,
      get('WEBHOOK_ALLOW_HTTP'),
      get('WEBHOOK_ALLOW_PRIVATE_TARGETS'),
      get('WEBHOOK_POLL_INTERVAL_MS'),
      get('WEBHOOK_CONCURRENCY'),
      get('WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION'),
      // A lease shorter than an attempt would let a second instance send it too.
      Math.max(get('WEBHOOK_LEASE_MS'), timeoutMs + 1000),
      get('WEBHOOK_MAX_SUBSCRIPTIONS'),
      parseDuration(get('WEBHOOK_SECRET_OVERLAP')),
      parseDuration(get('WEBHOOK_RETENTION')),
      // Within the process's own deadline, with the other half left to give the claims back.
      Math.min(SHUTDOWN_GRACE_MS, Math.floor(get('SHUTDOWN_TIMEOUT_MS') / 2)),
    );
  }
}
