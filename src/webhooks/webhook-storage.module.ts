import { Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Environment } from '../config/environment.js';
import { HostResolver } from './host-resolver.js';
import { PlantCreatedOutbox } from './plant-created.outbox.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookSettings } from './webhook-settings.js';
import { WebhookSubscription } from './webhook-subscription.entity.js';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository.js';

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
 * The webhooks feature's tables (subscriptions, the outbox of deliveries) and
 * settings, shared by its API (WebhooksModule), its dispatcher
 * (WebhookDispatchModule), and the create of a plant, which writes the outbox
 * through PlantCreatedOutbox inside its own transaction.
 */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookSubscription, WebhookDelivery])],
  providers: [
    { provide: WebhookSettings, inject: [ConfigService], useFactory: settingsFrom },
    WebhookSubscriptionsRepository,
    WebhookDeliveriesRepository,
    PlantCreatedOutbox,
    HostResolver,
  ],
  exports: [
    HostResolver,
    WebhookSettings,
    WebhookSubscriptionsRepository,
    WebhookDeliveriesRepository,
    PlantCreatedOutbox,
  ],
})
export class WebhookStorageModule {}

// What other features use of this one: the outbox write of a create.
export { PlantCreatedOutbox };
export type { CreatedPlantEventsPart } from './plant-created.outbox.js';
