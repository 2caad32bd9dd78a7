import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** One event sent (or to be sent) to a subscription. */
@ApiSchema({ name: 'WebhookDelivery' })
export class WebhookDeliveryDto {
  @ApiProperty({
    minLength: 36,
    description: 'The event id: the webhook-id header, the same on every attempt',
    example: 'msg_5b0e3c7d9a1f4e2b8c6d0a9f1e3b5c7d',
  })
  eventId!: string;

  @ApiProperty({
    type: 'string',
    enum: ['pending', 'delivered', 'failed'],
    minLength: 6,
    example: 'delivered',
  })
  state!: 'pending' | 'delivered' | 'failed';

  @ApiProperty({ type: 'integer', description: 'Attempts made so far', example: 1 })
  attempts!: number;

  @ApiPropertyOptional({
    type: 'integer',
    description: "The receiver's last HTTP status",
    example: 200,
  })
  lastStatus?: number;

  @ApiPropertyOptional({
    description: 'Why the last attempt failed (a short, sanitised excerpt of the answer at most)',
    example: 'receiver answered 500: busy',
  })
  lastError?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When a pending delivery is next tried',
    example: '2026-11-24T12:00:05.000Z',
  })
  nextAttemptAt?: string;

  @ApiProperty({ format: 'date-time', minLength: 20, example: '2026-11-24T12:00:00.000Z' })
  createdAt!: string;
}
