import { randomBytes, randomUUID } from 'node:crypto';
import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { CreateWebhookDto } from './dto/create-webhook.dto.js';
import { WebhookDeliveryDto } from './dto/webhook-delivery.dto.js';
import { CreatedWebhookDto, WebhookDto } from './dto/webhook.dto.js';
import { DELIVERIES_LIMIT_DEFAULT } from './dto/list-deliveries.query.js';
import type { PagePosition, PageQuery } from './dto/page.query.js';
import { type DeliveryRow, WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookSettings } from './webhook-settings.js';
import { newWebhookSecret } from './webhook-signature.js';
import {
  type SubscriptionRow,
  WebhookSubscriptionsRepository,
} from './webhook-subscriptions.repository.js';
import { webhookUrlProblem } from './webhook-url.js';

const NOT_FOUND = 'no webhook subscription with this id';

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
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly settings: WebhookSettings,
  ) {}

  async create(owner: string, body: CreateWebhookDto): Promise<CreatedWebhookDto> {
    const problem = webhookUrlProblem(body.url, this.settings.allowHttp);
    if (problem) throw new BadRequestException(problem);
    const url = new URL(body.url).href;
    const id = randomUUID();
    const secret = newWebhookSecret(randomBytes(32));
    const createdAt = Date.now();
    const description = body.description ?? null;
    await this.subscriptions.insert({
      id,
      owner,
      url,
      description,
      secret,
      createdAt,
      disabledAt: null,
    });
    return new CreatedWebhookDto(new WebhookDto(id, url, description, isoDate(createdAt)), secret);
  }

  /** A page of the owner's subscriptions, oldest first; `next` while more follow a limited page. */
  async list(owner: string, { limit, after }: PageQuery = {}): Promise<Page<WebhookDto>> {
    if (limit === 0) return { items: [] };
    const rows = await this.subscriptions.list(owner, {
      take: limit === undefined ? undefined : limit + 1,
      after,
    });
    return pageOf(rows, limit, toDto);
  }

  /** Deletes the subscription; its pending deliveries are dropped with it. */
  async delete(owner: string, id: string): Promise<void> {
    if (!isUUID(id) || !(await this.subscriptions.delete(owner, id))) {
      throw new NotFoundException(NOT_FOUND);
    }
  }

  /** A page of the subscription's deliveries, newest first; `next` while older ones follow. */
  async deliveriesOf(
    owner: string,
    id: string,
    { limit = DELIVERIES_LIMIT_DEFAULT, after }: PageQuery,
  ): Promise<Page<WebhookDeliveryDto>> {
    if (!isUUID(id) || !(await this.subscriptions.findOwned(owner, id))) {
      throw new NotFoundException(NOT_FOUND);
    }
    // One more row than asked tells whether a next page exists, in the same query.
    return pageOf(await this.deliveries.latestOf(id, limit + 1, after), limit, toDeliveryDto);
  }
}
