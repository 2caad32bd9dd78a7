import { InitialSchema1732262400000 } from './1732262400000-initial-schema.js';
import { Webhooks1764000000000 } from './1764000000000-webhooks.js';
import { WebhookOperations1765000000000 } from './1765000000000-webhook-operations.js';
import { TokenScopes1766000000000 } from './1766000000000-token-scopes.js';
import { WebhookRetention1767000000000 } from './1767000000000-webhook-retention.js';

/** Every migration, oldest first. Listed explicitly: globs do not survive bundling or ESM. */
export const migrations = [
  InitialSchema1732262400000,
  Webhooks1764000000000,
  WebhookOperations1765000000000,
  TokenScopes1766000000000,
  WebhookRetention1767000000000,
];
