import { randomBytes, randomUUID } from 'node:crypto';
import {
  BadRequestException,
  ConflictException,
  Injectable,
  NotFoundException,
} from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { CreateWebhookDto } from './dto/create-webhook.dto.js';
import { WebhookDeliveryDto } from './dto/webhook-delivery.dto.js';
import { CreatedWebhookDto, WebhookDto } from './dto/webhook.dto.js';
import { type DeliveryRow, WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookSettings } from './webhook-settings.js';
import { newWebhookSecret } from './webhook-signature.js';
import {
  type SubscriptionRow,
  WebhookSubscriptionsRepository,
} from './webhook-subscriptions.repository.js';
import { HostResolver } from './host-resolver.js';
import { resolvedTargetProblem, webhookUrlProblem } from './webhook-url.js';

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
@Injectable()
export class WebhooksService {
  constructor(
    private readonly subscriptions: WebhookSubscriptionsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly settings: WebhookSettings,
    private readonly resolver: HostResolver,
  ) {}

  async create(owner: string, body: CreateWebhookDto): Promise<CreatedWebhookDto> {
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

  async list(owner: string): Promise<WebhookDto[]> {
    return (await this.subscriptions.list(owner)).map(toDto);
  }

  /** Deletes the subscription; its pending deliveries are dropped with it. */
  async delete(owner: string, id: string): Promise<void> {
    if (!isUUID(id) || !(await this.subscriptions.delete(owner, id))) {
      throw new NotFoundException(NOT_FOUND);
    }
  }

  async deliveriesOf(owner: string, id: string, limit: number): Promise<WebhookDeliveryDto[]> {
    if (!isUUID(id) || !(await this.subscriptions.findOwned(owner, id))) {
      throw new NotFoundException(NOT_FOUND);
    }
    return (await this.deliveries.latestOf(id, limit)).map(toDeliveryDto);
  }
}
