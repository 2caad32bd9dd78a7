import { Module } from '@nestjs/common';
import { PageCursorModule } from '../http/page-cursor.module.js';
import { OpenApiWebhooks } from '../openapi/openapi-webhooks.js';
import { PlantCreatedWebhookDoc } from './plant-created.openapi.js';
import { WebhookStorageModule } from './webhook-storage.module.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Plant-created webhooks, as the API offers them: subscriptions per owner
 * (/webhooks) and their deliveries, and the `webhooks` section of the OpenAPI
 * document. The events are written by the create (PlantCreatedOutbox) and
 * sent by WebhookDispatchModule, signed as Standard Webhooks.
 */
@Module({
  imports: [WebhookStorageModule, PageCursorModule],
  controllers: [WebhooksController],
  providers: [WebhooksService, { provide: OpenApiWebhooks, useClass: PlantCreatedWebhookDoc }],
  exports: [OpenApiWebhooks],
})
export class WebhooksModule {}
