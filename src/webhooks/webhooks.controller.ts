import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CallerOwner } from '../auth/caller-owner.decorator.js';
import { CallerScope } from '../database/caller-scope.decorator.js';
import type { RequestScope } from '../database/request-scope.js';
import { RequiredScope } from '../auth/required-scope.decorator.js';
import { PageCursors } from '../http/page-cursor.js';
import { CreateWebhookDto } from './dto/create-webhook.dto.js';
import {
  DELIVERIES_LIMIT_DEFAULT,
  ParseListDeliveriesQueryPipe,
} from './dto/list-deliveries.query.js';
import { ParseListWebhooksQueryPipe } from './dto/list-webhooks.query.js';
import { linkNextPage, type PageQuery } from './dto/page.query.js';
import { RecoverDeliveriesDto } from './dto/recover-deliveries.dto.js';
import { WebhookDeliveryDto } from './dto/webhook-delivery.dto.js';
import { CreatedWebhookDto, WebhookDto, WebhookSecretDto } from './dto/webhook.dto.js';
import {
  ApiListWebhookDeliveries,
  ApiRecoverWebhookDeliveries,
  ApiRetryWebhookDelivery,
} from './webhook-deliveries.openapi.js';
import {
  ApiCreateWebhook,
  ApiDeleteWebhook,
  ApiListWebhooks,
  ApiRotateWebhookSecret,
} from './webhooks.openapi.js';
import { WebhooksService } from './webhooks.service.js';

@ApiTags('webhooks')
@ApiBearerAuth('bearerAuth')
// Subscribing sends every new plant to a URL of the caller's choice: a scope of its own (docs/DECISIONS.md).
@RequiredScope('webhooks:manage')
@Controller('webhooks')
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly cursors: PageCursors,
  ) {}

  @Get()
  @ApiListWebhooks()
  async list(
    @CallerOwner() owner: string,
    @CallerScope() scope: RequestScope,
    @Query(ParseListWebhooksQueryPipe) query: PageQuery,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WebhookDto[]> {
    const page = await this.webhooks.list(owner, query, scope);
    linkNextPage(reply, this.cursors, '/webhooks', 'webhooks', {
      limit: query.limit,
      next: page.next,
    });
    return page.items;
  }

  @Post()
  @HttpCode(HttpStatus.CREATED)
  @ApiCreateWebhook()
  create(
    @CallerOwner() owner: string,
    @CallerScope() scope: RequestScope,
    @Body() body: CreateWebhookDto,
  ): Promise<CreatedWebhookDto> {
    return this.webhooks.create(owner, body, scope);
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiDeleteWebhook()
  async delete(
    @CallerOwner() owner: string,
    @CallerScope() scope: RequestScope,
    @Param('id') id: string,
  ): Promise<void> {
    await this.webhooks.delete(owner, id, scope);
  }

  @Post(':id/deliveries/:eventId/retry')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiRetryWebhookDelivery()
  async retry(
    @CallerOwner() owner: string,
    @CallerScope() scope: RequestScope,
    @Param('id') id: string,
    @Param('eventId') eventId: string,
  ): Promise<void> {
    await this.webhooks.retry(owner, id, eventId, scope);
  }

  @Post(':id/rotate-secret')
  @HttpCode(HttpStatus.OK)
  @ApiRotateWebhookSecret()
  rotateSecret(
    @CallerOwner() owner: string,
    @CallerScope() scope: RequestScope,
    @Param('id') id: string,
  ): Promise<WebhookSecretDto> {
    return this.webhooks.rotateSecret(owner, id, scope);
  }

  @Post(':id/recover')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiRecoverWebhookDeliveries()
  async recover(
    @CallerOwner() owner: string,
    @CallerScope() scope: RequestScope,
    @Param('id') id: string,
    @Body() body: RecoverDeliveriesDto,
  ): Promise<void> {
    await this.webhooks.recover(owner, id, body.since, scope);
  }

  @Get(':id/deliveries')
  @ApiListWebhookDeliveries()
  async deliveries(
    @CallerOwner() owner: string,
    @CallerScope() scope: RequestScope,
    @Param('id') id: string,
    @Query(ParseListDeliveriesQueryPipe) query: PageQuery,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WebhookDeliveryDto[]> {
    const page = await this.webhooks.deliveriesOf(owner, id, query, scope);
    linkNextPage(
      reply,
      this.cursors,
      `/webhooks/${encodeURIComponent(id)}/deliveries`,
      'deliveries',
      {
        limit: query.limit ?? DELIVERIES_LIMIT_DEFAULT,
        next: page.next,
      },
    );
    return page.items;
  }
}
