import { Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Environment } from '../config/environment.js';
import { OpenApiWebhooks } from '../openapi/openapi-webhooks.js';
import { PlantCreatedWebhookDoc } from './plant-created.openapi.js';
import { PlantCreatedOutbox } from './plant-created.outbox.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { WebhookSender } from './webhook-sender.js';
import { WebhookSettings } from './webhook-settings.js';
import { WebhookSubscription } from './webhook-subscription.entity.js';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/** Read once at start-up; the two opt-ins weaken the SSRF guard and are said so in the log. */
function settingsFrom(config: ConfigService<Environment, true>): WebhookSettings {
  const settings = WebhookSettings.fromConfig(config);
  const logger = new Logger('Webhooks');
  if (settings.allowHttp) {
    logger.warn('WEBHOOK_ALLOW_HTTP=true: webhooks may be sent over plain http');
  }
  if (settings.allowPrivateTargets) {
    logger.warn(
      'WEBHOOK_ALLOW_PRIVATE_TARGETS=true: webhooks may reach loopback, private and link-local addresses',
    );
  }
  return settings;
}

/**
 * Plant-created webhooks: subscriptions per owner (/webhooks), and the
 * dispatcher that sends the events the create path wrote to the outbox
 * (PlantCreatedOutbox, which the plants feature calls in its transaction),
 * signed as Standard Webhooks.
 */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookSubscription, WebhookDelivery])],
  controllers: [WebhooksController],
  providers: [
    { provide: WebhookSettings, inject: [ConfigService], useFactory: settingsFrom },
    {
      provide: WebhookSender,
      inject: [WebhookSettings],
      useFactory: (settings: WebhookSettings) => new WebhookSender(settings),
    },
    WebhooksService,
    WebhookSubscriptionsRepository,
    WebhookDeliveriesRepository,
    WebhookDispatcher,
    PlantCreatedOutbox,
    { provide: OpenApiWebhooks, useClass: PlantCreatedWebhookDoc },
  ],
  exports: [OpenApiWebhooks, PlantCreatedOutbox],
})
export class WebhooksModule {}

// What other features use of this one: the outbox write of a create.
export { PlantCreatedOutbox };
