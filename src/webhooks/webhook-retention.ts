import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { DeliveryRetentionRepository } from './delivery-retention.repository.js';
import { WebhookSettings } from './webhook-settings.js';

/** Rows one DELETE removes at most: short statements, short locks, whatever the backlog. */
const BATCH = 500;
/** The longest time between two sweeps. */
const MAX_INTERVAL_MS = 10 * 60_000;
/** The shortest: a short retention (tests, demos) is not swept in a busy loop. */
const MIN_INTERVAL_MS = 1000;

/**
 * Deletes deliveries that finished (delivered or failed) more than
 * WEBHOOK_RETENTION ago, so that webhook_deliveries does not grow without
 * end: at start-up, then every tenth of the retention (between 1 s and
 * 10 min), in batches of BATCH rows. Pending deliveries are never touched, so
 * the pending-deliveries gauge (read from the table) is unchanged by it, and
 * the attempt counters are not derived from rows at all. Every worker
 * instance sweeps; two sweeps at once only delete the same rows once.
 */
@Injectable()
export class WebhookRetention implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;

  constructor(
    private readonly deliveries: DeliveryRetentionRepository,
    private readonly settings: WebhookSettings,
  ) {}

  private get intervalMs(): number {
    return Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, this.settings.retentionMs / 10));
  }

  onApplicationBootstrap(): void {
    this.schedule(0);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(wait: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep().finally(() => {
        this.running = undefined;
        this.schedule(this.intervalMs);
      });
    }, wait);
    // A pending sweep does not keep the process alive.
    this.timer.unref();
  }

  /** Deletes batch after batch until a batch comes back short (or shutdown begins). */
  private async sweep(): Promise<void> {
    try {
      const cutoff = Date.now() - this.settings.retentionMs;
      let deleted = 0;
      for (;;) {
        const batch = await this.deliveries.deleteFinishedBefore(cutoff, BATCH);
        deleted += batch;
        if (batch < BATCH || this.stopping) break;
      }
      if (deleted > 0) this.logger.log(`deleted ${deleted} finished webhook deliveries`);
    } catch (error) {
      this.logger.error(`deleting finished deliveries failed: ${(error as Error).message}`);
    }
  }
}
