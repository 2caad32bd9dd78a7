import { randomUUID } from 'node:crypto';
import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { OutboxSignal } from '../database/outbox-signal.js';
import { Transactions } from '../database/transactions.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { inClientSpan } from '../tracing/trace-hooks.js';
import { FairShare } from './fair-share.js';
import { attemptOutcome } from './attempt-outcome.js';
import { type AttemptRecord, DeliveryAttemptsRepository } from './delivery-attempts.repository.js';
import { type ClaimedDelivery, DeliveryClaimsRepository } from './delivery-claims.repository.js';
import { WebhookSender } from './webhook-sender.js';
import { WebhookSettings } from './webhook-settings.js';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository.js';
import { whileLeased } from './while-leased.js';

/** A claimed delivery, and until when its claim holds (a Date.now() value). */
type Claim = ClaimedDelivery & { leaseUntil: number };

/**
 * Runs in every instance: claims due deliveries (a lease per delivery, see
 * DeliveryClaimsRepository), sends them with at most `concurrency` in
 * flight, and no more per subscription and per owner than FairShare allows
 * (a claim takes only what may start), and records each attempt: delivered on a 2xx, the subscription
 * disabled on a 410, otherwise a retry after the next wait of the schedule
 * (with jitter, or the receiver's later Retry-After), or failed once the schedule is spent. It polls, and a
 * local create wakes it at once (OutboxSignal).
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private readonly instanceId = randomUUID();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly share: FairShare;
  /** Aborted when shutdown's grace is over: sends in flight stop, their claims go back. */
  private readonly shutdown = new AbortController();
  /** Resolved once shutdown begins: a pass waiting for a free place stops waiting. */
  private readonly stopped: Promise<void>;
  private stop = (): void => {};
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private wakeAgain = false;
  private stopping = false;
  private unsubscribe = (): void => {};

  constructor(
    private readonly deliveries: DeliveryClaimsRepository,
    private readonly attempts: DeliveryAttemptsRepository,
    private readonly subscriptions: WebhookSubscriptionsRepository,
    private readonly sender: WebhookSender,
    private readonly settings: WebhookSettings,
    private readonly metrics: WebhookMetrics,
    private readonly outbox: OutboxSignal,
    private readonly transactions: Transactions,
  ) {
    this.share = new FairShare(settings.concurrency, settings.concurrencyPerSubscription);
    this.stopped = new Promise((resolve) => (this.stop = resolve));
  }

  onApplicationBootstrap(): void {
    this.metrics.countPendingWith(() => this.deliveries.pendingCount());
    this.unsubscribe = this.outbox.subscribe(() => this.wake());
    this.wake();
  }

  /** Looks for due deliveries now (or right after the current pass). */
  wake(): void {
    if (this.stopping) return;
    if (this.running) {
      this.wakeAgain = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.stopping) return;
      const wait = this.wakeAgain ? 0 : this.settings.pollIntervalMs;
      this.wakeAgain = false;
      this.timer = setTimeout(() => this.wake(), wait);
    });
  }

  /**
   * Stops claiming; lets deliveries in flight finish for a while (from the
   * moment shutdown begins, however busy the dispatcher is), then gives their
   * claims back.
   */
  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.stop();
    this.unsubscribe();
    clearTimeout(this.timer);
    const grace = setTimeout(() => this.shutdown.abort(), this.settings.shutdownGraceMs);
    await this.running;
    await Promise.all(this.inFlight);
    clearTimeout(grace);
    this.shutdown.abort();
  }

  /**
   * Claims and starts due deliveries until none that may start is due, or
   * concurrency is full and the pass must wait. A claim that brought a
   * subscription or owner to its cap may have left rows out for it: the next
   * claim, without those at their cap, looks further.
   */
  private async pass(): Promise<void> {
    try {
      while (!this.stopping) {
        const free = this.settings.concurrency - this.inFlight.size;
        if (free <= 0) {
          await Promise.race([...this.inFlight, this.stopped]);
          continue;
        }
        const now = Date.now();
        const room = this.share.room();
        const leaseUntil = now + this.settings.leaseMs;
        const claimed = await this.deliveries.claim(this.instanceId, now, leaseUntil, free, room);
        for (const delivery of claimed) this.start({ ...delivery, leaseUntil });
        // Fewer than asked, and no cap reached: nothing else is due.
        if (claimed.length < free && !this.share.filled(room, claimed)) return;
      }
    } catch (error) {
      this.logger.error(`claiming deliveries failed: ${(error as Error).message}`);
    }
  }

  private start(delivery: Claim): void {
    this.share.started(delivery);
    const attempt = this.attempt(delivery)
      .catch((error: unknown) =>
        this.logger.error(`delivery ${delivery.id} failed: ${(error as Error).message}`),
      )
      .finally(() => {
        this.inFlight.delete(attempt);
        // Its subscription or owner was at its cap: what that held back may go now.
        if (this.share.finished(delivery)) this.wake();
      });
    this.inFlight.add(attempt);
  }

  private async attempt(delivery: Claim): Promise<void> {
    const target = await this.subscriptions.target(delivery.subscriptionId, Date.now());
    // Deleted meanwhile: its deliveries went with it. Disabled: dropped.
    if (!target) return;
    const attempts = delivery.attempts + 1;
    if (target.disabledAt !== null) {
      await this.record(delivery, attempts - 1, {
        state: 'failed',
        lastStatus: null,
        lastError: 'subscription disabled',
        nextAttemptAt: null,
      });
      return;
    }
    const started = performance.now();
    // A client span per attempt, linked to the create that wrote the delivery
    // (no-ops with tracing off). Its attributes: method, URL without query, status, event id.
    const result = await inClientSpan(
      'webhook POST',
      delivery.traceParent ?? undefined,
      { method: 'POST', url: target.url, attributes: { 'webhook.id': delivery.id } },
      () =>
        this.sender.send(
          {
            url: target.url,
            secrets: target.secrets,
            eventId: delivery.id,
            body: delivery.payload,
          },
          this.shutdown.signal,
        ),
    );
    const seconds = (performance.now() - started) / 1000;
    if (result.status === undefined && this.shutdown.signal.aborted) {
      await this.deliveries.releaseClaim(delivery.id, this.instanceId);
      return;
    }
    const outcome = attemptOutcome(result, attempts, this.settings, Date.now());
    this.metrics.deliveryAttempted(outcome.kind, seconds);
    // No secret, signature or body: the event, where, and how it went.
    this.logger.log(
      `webhook ${delivery.id} to ${new URL(target.url).host} attempt ${attempts}: ` +
        `${outcome.record.lastStatus ?? outcome.record.lastError} -> ${outcome.kind} (${Math.round(seconds * 1000)} ms)`,
    );
    // Disabled first: whoever sees the 410 recorded sees the subscription disabled.
    if (outcome.kind === 'disabled') await this.disable(delivery);
    await this.record(delivery, attempts, outcome.record);
  }

  /** Disables the subscription and drops its other pending deliveries, at once. */
  private async disable(delivery: Claim): Promise<void> {
    const disabled = () =>
      this.transactions.run(async (manager) => {
        await this.subscriptions.disable(manager, delivery.subscriptionId, Date.now());
        await this.attempts.dropPending(
          manager,
          delivery.subscriptionId,
          delivery.id,
          'subscription disabled: receiver answered 410 Gone',
        );
      });
    // Tried again while the claim holds: see while-leased.ts.
    await whileLeased(disabled, delivery.leaseUntil, this.shutdown.signal);
  }

  private async record(delivery: Claim, attempts: number, outcome: AttemptRecord): Promise<void> {
    const recorded = () =>
      this.attempts.recordAttempt(delivery.id, this.instanceId, attempts, outcome);
    const held = await whileLeased(recorded, delivery.leaseUntil, this.shutdown.signal);
    if (!held)
      this.logger.warn(`webhook ${delivery.id}: lease lost before the attempt was recorded`);
  }
}
