import { Injectable } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { OpenApiWebhooks } from '../openapi/openapi-webhooks.js';

const header = (name: string, description: string, example: string) => ({
  name,
  in: 'header' as const,
  required: true,
  description,
  schema: { type: 'string' as const, minLength: 1 },
  example,
});

/**
 * The `plantCreated` webhook of the document's `webhooks` section: what a
 * subscription's URL receives, as the public Plant Store document declares
 * it (`/plant/webhook`, body NewPlant), signed as Standard Webhooks.
 */
@Injectable()
export class PlantCreatedWebhookDoc extends OpenApiWebhooks {
  readonly webhooks: NonNullable<OpenAPIObject['webhooks']> = {
    plantCreated: {
      post: {
        operationId: 'plantCreated',
        // Sent by the service: the receiver checks the signature, not a token.
        security: [],
        tags: ['webhooks'],
        summary: 'A new plant was added to the store',
        description:
          "Sent to every subscription of the plant's owner (POST /webhooks) once the create is committed, at least once, retried with backoff until the receiver answers 2xx. " +
          'The body is the NewPlant exactly as stored, without an envelope. Verify webhook-signature (Standard Webhooks: v1, base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}" keyed with the base64-decoded secret after whsec_) before trusting it, and use webhook-id to drop duplicates.',
        parameters: [
          header(
            'webhook-id',
            'The event id, the same on every retry',
            'msg_5b0e3c7d9a1f4e2b8c6d0a9f1e3b5c7d',
          ),
          header(
            'webhook-timestamp',
            'When this attempt was signed, in Unix seconds',
            '1795608000',
          ),
          header(
            'webhook-signature',
            'v1, then the base64 HMAC-SHA256 signature',
            'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
          ),
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/NewPlant' },
              examples: {
                tagged: {
                  summary: 'A plant with a tag',
                  value: { id: 1, name: 'Monstera deliciosa', tag: 'tropical' },
                },
              },
            },
          },
        },
        responses: {
          '200': {
            description:
              'Any 2xx within the timeout (10 s by default) acknowledges the event; anything else, or no answer, is retried',
          },
          '410': { description: 'Gone: the subscription is disabled and receives nothing more' },
        },
      },
    },
  };
}
