import { Logger, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { WebhookVariables } from './webhook.variables.js';
import { PLANT_CREATED_EVENTS } from '../plants/plant-created.port.js';
import { HostResolver } from './host-resolver.js';
import { PlantCreatedOutbox } from './plant-created.outbox.js';
import { DeliveryAttemptsRepository } from './delivery-attempts.repository.js';
import { DeliveryClaimsRepository } from './delivery-claims.repository.js';
import { DeliveryRetentionRepository } from './delivery-retention.repository.js';
import { OwnerDeliveriesRepository } from './owner-deliveries.repository.js';
import { WebhookOutboxRepository } from './webhook-outbox.repository.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookSettings } from './webhook-settings.js';
import type { ProcessVariables } from '../config/process.variables.js';
import { WebhookSubscription } from './webhook-subscription.entity.js';
import { WebhookSubscriptionsRepository } from './webhook-subscriptions.repository.js';

/** Read once at start-up; the two opt-ins weaken the SSRF guard and are said so in the log. */
function settingsFrom(
  config: ConfigService<WebhookVariables & ProcessVariables, true>,
): WebhookSettings {
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
 * through the plants feature's port (PLANT_CREATED_EVENTS, provided by
 * PlantCreatedOutbox) inside its own transaction or statement.
 */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookSubscription, WebhookDelivery])],
  providers: [
    { provide: WebhookSettings, inject: [ConfigService], useFactory: settingsFrom },
    WebhookSubscriptionsRepository,
    WebhookOutboxRepository,
    DeliveryClaimsRepository,
    DeliveryAttemptsRepository,
    DeliveryRetentionRepository,
    OwnerDeliveriesRepository,
    PlantCreatedOutbox,
    { provide: PLANT_CREATED_EVENTS, useExisting: PlantCreatedOutbox },
    HostResolver,
  ],
  exports: [
    HostResolver,
    WebhookSettings,
    WebhookSubscriptionsRepository,
    DeliveryClaimsRepository,
    DeliveryAttemptsRepository,
    DeliveryRetentionRepository,
    OwnerDeliveriesRepository,
    PLANT_CREATED_EVENTS,
  ],
})
export class WebhookStorageModule {}
