import { applyDecorators } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
} from '@nestjs/swagger';
import { CURSOR_RULE } from '../http/page-cursor.js';
import { ApiAfterQuery, ApiLimitQuery, NEXT_LINK_HEADER } from '../openapi/paging.js';
import { limitRule } from '../validation/query-parameters.js';
import { WEBHOOKS_LIMIT } from './dto/list-webhooks.query.js';
import {
  ApiErrorResponses,
  type OperationErrors,
} from '../errors/api-error-responses.decorator.js';
import { CreateWebhookDto } from './dto/create-webhook.dto.js';
import { CreatedWebhookDto, WebhookDto, WebhookSecretDto } from './dto/webhook.dto.js';

/*
 * The OpenAPI description of the subscription endpoints, beside the
 * controller so that it stays thin. The event itself is described in the
 * document's `webhooks` section (src/openapi/openapi-webhooks.ts).
 */

// Ids are UUIDs the service made; anything else names no subscription (a 404 like an unknown one).
export const ID_PARAM = ApiParam({
  name: 'id',
  description: 'The subscription id',
  schema: { type: 'string', format: 'uuid', example: '3f1c2a8e-9b7d-4c55-a1e2-6f0d4b8c9e11' },
});

export const NOT_FOUND = ['no webhook subscription with this id'];
export const MANAGE_SCOPE =
  'the access token lacks the scope this operation needs: webhooks:manage';

/** The errors of an operation on one subscription that takes no input but its id. */
export const ON_A_SUBSCRIPTION: OperationErrors = {
  401: true,
  403: [MANAGE_SCOPE],
  404: NOT_FOUND,
  414: true,
  429: true,
  500: true,
  503: true,
};

const SUBSCRIPTION = {
  id: '3f1c2a8e-9b7d-4c55-a1e2-6f0d4b8c9e11',
  url: 'https://receiver.example.com/hooks/plants',
  description: 'inventory sync',
  createdAt: '2026-11-24T12:00:00.000Z',
};

export function ApiCreateWebhook(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'createWebhook',
      summary: 'Subscribe to plant-created events',
      description:
        'Every plant the caller creates from now on is sent to `url` as a `plantCreated` event (see the webhooks section), signed with the returned secret (Standard Webhooks). The secret is shown only in this answer. A URL that can never be delivered under the current settings (http, a non-public address or a name that resolves only to such, `localhost`) is a 400 naming the setting that would allow it; a name that does not resolve yet is accepted. An owner has at most `WEBHOOK_MAX_SUBSCRIPTIONS` subscriptions (default 20), and one per URL (compared normalised).',
    }),
    ApiBody({
      type: CreateWebhookDto,
      examples: {
        subscription: {
          summary: 'A receiver with a note',
          value: { url: SUBSCRIPTION.url, description: SUBSCRIPTION.description },
        },
      },
    }),
    ApiCreatedResponse({
      type: CreatedWebhookDto,
      description: 'The subscription, with its secret',
      examples: {
        created: {
          summary: 'The new subscription and its secret',
          value: { ...SUBSCRIPTION, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3XqyM1BfHmY=' },
        },
      },
    }),
    ApiErrorResponses({
      400: [
        'url must use https (WEBHOOK_ALLOW_HTTP=true allows http)',
        'url must be an absolute URL such as https://receiver.example.com/hooks',
        'url host is not a public unicast address: WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows loopback, private and other non-public receivers',
      ],
      401: true,
      403: [MANAGE_SCOPE],
      409: [
        'this owner already has 20 webhook subscriptions, and the limit (WEBHOOK_MAX_SUBSCRIPTIONS) is 20: delete one first',
        `a webhook subscription to this url already exists: ${SUBSCRIPTION.id}`,
      ],
      413: true,
      415: true,
      429: true,
      500: true,
      503: true,
    }),
  );
}

export function ApiListWebhooks(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'listWebhooks',
      summary: "List the caller's webhook subscriptions",
      description:
        'Without their secrets, oldest first. With limit, while subscriptions remain, the Link header carries the next page (rel="next").',
    }),
    ApiLimitQuery(WEBHOOKS_LIMIT, 'At most this many subscriptions; without it, all of them'),
    ApiAfterQuery(),
    ApiOkResponse({
      type: WebhookDto,
      isArray: true,
      description: "The caller's subscriptions, oldest first",
      headers: NEXT_LINK_HEADER,
      examples: {
        one: { summary: 'One subscription', value: [SUBSCRIPTION] },
        none: { summary: 'No subscription', value: [] },
      },
    }),
    ApiErrorResponses({
      400: [limitRule(WEBHOOKS_LIMIT), CURSOR_RULE],
      401: true,
      403: [MANAGE_SCOPE],
      429: true,
      500: true,
      503: true,
    }),
  );
}

export function ApiDeleteWebhook(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook subscription',
      description: "Its pending events are dropped. Another owner's subscription is a 404.",
    }),
    ID_PARAM,
    ApiNoContentResponse({ description: 'The subscription was deleted' }),
    ApiErrorResponses(ON_A_SUBSCRIPTION),
  );
}

export function ApiRotateWebhookSecret(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate the signing secret',
      description:
        'A new secret, shown only in this answer. For `WEBHOOK_SECRET_OVERLAP` (default 24h) deliveries carry both signatures (`v1,<new> v1,<old>`), so that a receiver switches without a gap; a second rotation within the overlap keeps the newest two.',
    }),
    ID_PARAM,
    ApiOkResponse({
      type: WebhookSecretDto,
      description: 'The new secret',
      examples: {
        rotated: {
          summary: 'The new secret',
          value: { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3XqyM1BfHmY=' },
        },
      },
    }),
    ApiErrorResponses(ON_A_SUBSCRIPTION),
  );
}
