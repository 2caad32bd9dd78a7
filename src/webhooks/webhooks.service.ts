import { randomBytes, randomUUID } from 'node:crypto';
import {
  BadRequestException,
  ConflictException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { CreateWebhookDto } from './dto/create-webhook.dto.js';
import { SINCE_RULE } from './dto/recover-deliveries.dto.js';
import { WebhookDeliveryDto } from './dto/webhook-delivery.dto.js';
import { CreatedWebhookDto, WebhookDto, WebhookSecretDto } from './dto/webhook.dto.js';
import { DELIVERIES_LIMIT_DEFAULT } from './dto/list-deliveries.query.js';
import type { PagePosition, PageQuery } from './dto/page.query.js';
import { type DeliveryRow, OwnerDeliveriesRepository } from './owner-deliveries.repository.js';
import { WebhookSettings } from './webhook-settings.js';
import { newWebhookSecret } from './webhook-signature.js';
import {
  type SubscriptionRow,
  WebhookSubscriptionsRepository,
} from './webhook-subscriptions.repository.js';
import { OutboxSignal } from '../database/outbox-signal.js';
import type { RequestScope } from '../database/request-scope.js';
import { RetriedOnce } from '../database/retried-once.decorator.js';
import { HostResolver } from './host-resolver.js';
import { resolvedTargetProblem, webhookUrlProblem } from './webhook-url.js';

const NOT_FOUND = 'no webhook subscription with this id';
const EVENT_ID = /^msg_[0-9a-f]{32}$/;
const NO_DELIVERY = 'no delivery with this event id for this webhook subscription';

const isoDate = (ms: number): string => new Date(ms).toISOString();

const toDto = (row: SubscriptionRow): WebhookDto =>
  new WebhookDto(
    row.id,
    row.url,
    row.description,
    isoDate(row.createdAt),
    row.disabledAt === null ? undefined : isoDate(row.disabledAt),
  );

function toDeliveryDto(row: DeliveryRow): WebhookDeliveryDto {
  const dto = new WebhookDeliveryDto();
  dto.eventId = row.id;
  dto.state = row.state;
  dto.attempts = row.attempts;
  if (row.lastStatus !== null) dto.lastStatus = row.lastStatus;
  if (row.lastError !== null) dto.lastError = row.lastError;
  if (row.state === 'pending' && row.nextAttemptAt !== null) {
    dto.nextAttemptAt = isoDate(row.nextAttemptAt);
  }
  dto.createdAt = isoDate(row.createdAt);
  return dto;
}

/** The caller's webhook subscriptions and what was delivered to them. */
/** A page of a list, and where the next page goes on from while items remain. */
export interface Page<Dto> {
  items: Dto[];
  next?: PagePosition;
}

/** The first `limit` rows (all without one) as DTOs, with `next` when a row beyond them came back. */
function pageOf<Row extends PagePosition, Dto>(
  rows: Row[],
  limit: number | undefined,
  toItem: (row: Row) => Dto,
): Page<Dto> {
  if (limit === undefined || rows.length <= limit) return { items: rows.map(toItem) };
  const last = rows[limit - 1];
  return {
    items: rows.slice(0, limit).map(toItem),
    next: { createdAt: last.createdAt, id: last.id },
  };
}

@Injectable()
export class WebhooksService {
  constructor(
    private readonly subscriptions: WebhookSubscriptionsRepository,
    private readonly deliveries: OwnerDeliveriesRepository,
    private readonly settings: WebhookSettings,
    private readonly resolver: HostResolver,
    private readonly outbox: OutboxSignal,
  ) {}

  @RetriedOnce('if-nothing-ran')
  async create(
    owner: string,
    body: CreateWebhookDto,
    scope: RequestScope,
  ): Promise<CreatedWebhookDto> {
    const problem =
      webhookUrlProblem(body.url, this.settings) ??
      (await resolvedTargetProblem(new URL(body.url), this.settings, this.resolver));
    if (problem) throw new BadRequestException(problem);
    const url = new URL(body.url).href;
    const id = randomUUID();
    const secret = newWebhookSecret(randomBytes(32));
    const createdAt = Date.now();
    const description = body.description ?? null;
    const outcome = await this.subscriptions.insertBounded(
      { id, owner, url, description, secret, createdAt, disabledAt: null },
      this.settings.maxSubscriptions,
      scope,
    );
    if (outcome.kind === 'full') {
      throw new ConflictException(
        `this owner already has ${outcome.count} webhook subscriptions, and the limit ` +
          `(WEBHOOK_MAX_SUBSCRIPTIONS) is ${this.settings.maxSubscriptions}: delete one first`,
      );
    }
    if (outcome.kind === 'duplicate') {
      throw new ConflictException(
        `a webhook subscription to this url already exists: ${outcome.existingId}`,
      );
    }
    return new CreatedWebhookDto(new WebhookDto(id, url, description, isoDate(createdAt)), secret);
  }

  /** A page of the owner's subscriptions, oldest first; `next` while more follow a limited page. */
  @RetriedOnce('repeatable')
  async list(
    owner: string,
    { limit, after }: PageQuery,
    scope: RequestScope,
  ): Promise<Page<WebhookDto>> {
    if (limit === 0) return { items: [] };
    const take = limit === undefined ? undefined : limit + 1;
    const rows = await this.subscriptions.list(owner, { take, after }, scope);
    return pageOf(rows, limit, toDto);
  }

  /** Deletes the subscription; its pending deliveries are dropped with it. */
  @RetriedOnce('if-nothing-ran')
  async delete(owner: string, id: string, scope: RequestScope): Promise<void> {
    if (!isUUID(id) || !(await this.subscriptions.delete(owner, id, scope))) {
      throw new NotFoundException(NOT_FOUND);
    }
  }

  /** A page of the subscription's deliveries, newest first; `next` while older ones follow. */
  @RetriedOnce('repeatable')
  async deliveriesOf(
    owner: string,
    id: string,
    { limit = DELIVERIES_LIMIT_DEFAULT, after }: PageQuery,
    scope: RequestScope,
  ): Promise<Page<WebhookDeliveryDto>> {
    await this.owned(owner, id, scope);
    // One more row than asked tells whether a next page exists, in the same query.
    const rows = await this.deliveries.latestOf(id, limit + 1, after, scope);
    return pageOf(rows, limit, toDeliveryDto);
  }

  /** Sends a delivered or failed delivery again now, with the same webhook-id. */
  @RetriedOnce('if-nothing-ran')
  async retry(owner: string, id: string, eventId: string, scope: RequestScope): Promise<void> {
    await this.active(owner, id, scope);
    // Event ids are ones the database made: anything else names no delivery (and a NUL would not reach PostgreSQL).
    if (!EVENT_ID.test(eventId)) throw new NotFoundException(NO_DELIVERY);
    const outcome = await this.deliveries.redeliver(id, eventId, Date.now(), scope);
    if (outcome === 'unknown') throw new NotFoundException(NO_DELIVERY);
    if (outcome === 'pending') {
      throw new ConflictException('this delivery is pending: it is sent again on its own');
    }
    this.outbox.notify();
  }

  /** Sends again every failed delivery of the subscription created since `since`. */
  @RetriedOnce('if-nothing-ran')
  async recover(owner: string, id: string, since: string, scope: RequestScope): Promise<void> {
    const from = Date.parse(since);
    if (Number.isNaN(from)) throw new BadRequestException(SINCE_RULE);
    await this.active(owner, id, scope);
    if ((await this.deliveries.recover(id, from, Date.now(), scope)) > 0) this.outbox.notify();
  }

  /**
   * A new secret for the subscription, shown once; the one it replaces still
   * signs for WEBHOOK_SECRET_OVERLAP, so that receivers switch without a gap.
   */
  @RetriedOnce('if-nothing-ran')
  async rotateSecret(owner: string, id: string, scope: RequestScope): Promise<WebhookSecretDto> {
    const secret = newWebhookSecret(randomBytes(32));
    const until = Date.now() + this.settings.secretOverlapMs;
    const rotated =
      isUUID(id) && (await this.subscriptions.rotateSecret(owner, id, secret, until, scope));
    if (!rotated) {
      throw new NotFoundException(NOT_FOUND);
    }
    return new WebhookSecretDto(secret);
  }

  private async owned(owner: string, id: string, scope: RequestScope): Promise<SubscriptionRow> {
    const subscription = isUUID(id) ? await this.subscriptions.findOwned(owner, id, scope) : null;
    if (!subscription) throw new NotFoundException(NOT_FOUND);
    return subscription;
  }

  /** The owner's subscription, which must be active to send anything again. */
  private async active(owner: string, id: string, scope: RequestScope): Promise<void> {
    if ((await this.owned(owner, id, scope)).disabledAt !== null) {
      throw new ConflictException(
        'this subscription is disabled (its receiver answered 410 Gone): subscribe the URL again',
      );
    }
  }
}
