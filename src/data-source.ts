import { DataSource } from 'typeorm';
import { ApiToken } from './auth/api-token.entity.js';
import { loadEnvironment } from './environment.js';
import { dataSourceOptions } from './database/data-source-options.js';
import { Plant } from './plants/plant.entity.js';
import { WebhookDelivery } from './webhooks/webhook-delivery.entity.js';
import { WebhookSubscription } from './webhooks/webhook-subscription.entity.js';

/**
 * Entry point of the TypeORM CLI (`npm run migration:generate|run|revert`):
 * the service's options, from the same validated environment, with every
 * feature's entity so that `migration:generate` compares the whole schema.
 */
export default new DataSource(
  dataSourceOptions(loadEnvironment(), [Plant, ApiToken, WebhookSubscription, WebhookDelivery]),
);
