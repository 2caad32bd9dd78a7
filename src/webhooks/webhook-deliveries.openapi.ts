import { applyDecorators } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
} from '@nestjs/swagger';
import { CURSOR_RULE } from '../http/page-cursor.js';
import { ApiAfterQuery, ApiLimitQuery, NEXT_LINK_HEADER } from '../openapi/paging.js';
import { limitRule } from '../validation/query-parameters.js';
import { ApiErrorResponses } from '../errors/api-error-responses.decorator.js';
import { DELIVERIES_LIMIT, DELIVERIES_LIMIT_DEFAULT } from './dto/list-deliveries.query.js';
import { RecoverDeliveriesDto, SINCE_RULE } from './dto/recover-deliveries.dto.js';
import { WebhookDeliveryDto } from './dto/webhook-delivery.dto.js';

import { ID_PARAM, MANAGE_SCOPE, NOT_FOUND, ON_A_SUBSCRIPTION } from './webhooks.openapi.js';

/*
 * The OpenAPI description of a subscription's deliveries: their list, a
 * delivery sent again, the failed ones recovered.
 */

export function ApiListWebhookDeliveries(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'listWebhookDeliveries',
      summary: 'The latest deliveries of a subscription',
      description:
        'Newest first: each event, its state, attempts and the last outcome. While older deliveries remain, the Link header carries the next page (rel="next").',
    }),
    ID_PARAM,
    ApiLimitQuery(
      DELIVERIES_LIMIT,
      `At most this many deliveries (default ${DELIVERIES_LIMIT_DEFAULT})`,
    ),
    ApiAfterQuery(),
    ApiOkResponse({
      type: WebhookDeliveryDto,
      isArray: true,
      description: 'Newest first',
      headers: NEXT_LINK_HEADER,
      examples: {
        deliveries: {
          summary: 'A retried delivery and a delivered one',
          value: [
            {
              eventId: 'msg_9c4f0e1a2b3d4c5e6f708192a3b4c5d6',
              state: 'pending',
              attempts: 1,
              lastStatus: 500,
              lastError: 'receiver answered 500: busy',
              nextAttemptAt: '2026-11-24T12:00:06.000Z',
              createdAt: '2026-11-24T12:00:01.000Z',
            },
            {
              eventId: 'msg_5b0e3c7d9a1f4e2b8c6d0a9f1e3b5c7d',
              state: 'delivered',
              attempts: 1,
              lastStatus: 200,
              createdAt: '2026-11-24T12:00:00.000Z',
            },
          ],
        },
      },
    }),
    ApiErrorResponses({ 400: [limitRule(DELIVERIES_LIMIT), CURSOR_RULE], ...ON_A_SUBSCRIPTION }),
  );
}

const EVENT_ID_PARAM = ApiParam({
  name: 'eventId',
  description: 'The event id, as the deliveries list shows it (the webhook-id header)',
  schema: { type: 'string', example: 'msg_9c4f0e1a2b3d4c5e6f708192a3b4c5d6' },
});

const DISABLED =
  'this subscription is disabled (its receiver answered 410 Gone): subscribe the URL again';

export function ApiRetryWebhookDelivery(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'retryWebhookDelivery',
      summary: 'Send a delivery again',
      description:
        'A delivered or failed delivery is sent again now, with the same `webhook-id` and a fresh retry schedule. A pending one is a 409.',
    }),
    ID_PARAM,
    EVENT_ID_PARAM,
    ApiAcceptedResponse({ description: 'The delivery is pending again' }),
    ApiErrorResponses({
      401: true,
      403: [MANAGE_SCOPE],
      404: [...NOT_FOUND, 'no delivery with this event id for this webhook subscription'],
      414: true,
      409: ['this delivery is pending: it is sent again on its own', DISABLED],
      429: true,
      500: true,
      503: true,
    }),
  );
}

export function ApiRecoverWebhookDeliveries(): MethodDecorator {
  return applyDecorators(
    ApiOperation({
      operationId: 'recoverWebhookDeliveries',
      summary: 'Send failed deliveries again',
      description:
        'Every failed delivery of the subscription created at or after `since` is sent again, each with its own `webhook-id` and a fresh retry schedule.',
    }),
    ID_PARAM,
    ApiBody({
      type: RecoverDeliveriesDto,
      examples: { since: { summary: 'Since noon UTC', value: { since: '2026-11-24T12:00:00Z' } } },
    }),
    ApiAcceptedResponse({ description: 'The failed deliveries are pending again' }),
    ApiErrorResponses({
      400: [SINCE_RULE],
      401: true,
      403: [MANAGE_SCOPE],
      404: NOT_FOUND,
      414: true,
      409: [DISABLED],
      413: true,
      415: true,
      429: true,
      500: true,
      503: true,
    }),
  );
}
