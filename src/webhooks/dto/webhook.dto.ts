import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** A subscription as GET /webhooks shows it: never its secret. */
@ApiSchema({ name: 'Webhook' })
export class WebhookDto {
  @ApiProperty({
    minLength: 36,
    maxLength: 36,
    description: 'The subscription id',
    example: '3f1c2a8e-9b7d-4c55-a1e2-6f0d4b8c9e11',
  })
  id: string;

  @ApiProperty({
    minLength: 1,
    description: 'Where events are sent',
    example: 'https://receiver.example.com/hooks/plants',
  })
  url: string;

  @ApiPropertyOptional({ description: 'The note given at creation', example: 'inventory sync' })
  description?: string;

  @ApiProperty({ format: 'date-time', minLength: 20, example: '2026-11-24T12:00:00.000Z' })
  createdAt: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the receiver answered 410 Gone: no event is sent any more',
    example: '2026-11-24T13:00:00.000Z',
  })
  disabledAt?: string;

  constructor(
    id: string,
    url: string,
    description: string | null,
    createdAt: string,
    disabledAt?: string,
  ) {
    this.id = id;
    this.url = url;
    if (description !== null) this.description = description;
    this.createdAt = createdAt;
    if (disabledAt !== undefined) this.disabledAt = disabledAt;
  }
}

/** The answer to POST /webhooks: the only time the secret is shown. */
@ApiSchema({ name: 'CreatedWebhook' })
export class CreatedWebhookDto extends WebhookDto {
  @ApiProperty({
    minLength: 38,
    description:
      'The signing secret (Standard Webhooks: whsec_ + base64 of 32 random bytes); shown only in this answer',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3XqyM1BfHmY=',
  })
  secret: string;

  constructor(subscription: WebhookDto, secret: string) {
    super(
      subscription.id,
      subscription.url,
      subscription.description ?? null,
      subscription.createdAt,
    );
    this.secret = secret;
  }
}

@ApiSchema({
  name: 'WebhookSecret',
  description: 'A new signing secret, shown only in this answer',
})
export class WebhookSecretDto {
  @ApiProperty({
    description: 'The new signing secret (Standard Webhooks: whsec_ + base64 of 32 random bytes)',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3XqyM1BfHmY=',
    pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
    minLength: 38,
  })
  readonly secret: string;

  constructor(secret: string) {
    this.secret = secret;
  }
}
