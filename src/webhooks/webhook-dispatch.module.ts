import { Module } from '@nestjs/common';
import { HostResolver } from './host-resolver.js';
import { WebhookMetrics } from './webhook-metrics.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { WebhookRetention } from './webhook-retention.js';
import { WebhookSender } from './webhook-sender.js';
import { WebhookSettings } from './webhook-settings.js';
import { WebhookStorageModule } from './webhook-storage.module.js';

/**
 * Sends the events in the outbox and deletes finished ones after
 * WEBHOOK_RETENTION: loaded by instances whose APP_ROLE is
 * `all` or `worker` (see app.module.ts).
 */
@Module({
  imports: [WebhookStorageModule],
  providers: [
    {
      provide: WebhookSender,
      inject: [WebhookSettings, HostResolver],
      useFactory: (settings: WebhookSettings, resolver: HostResolver) =>
        new WebhookSender(settings, resolver),
    },
    WebhookDispatcher,
    WebhookMetrics,
    WebhookRetention,
  ],
})
export class WebhookDispatchModule {}
