import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsRFC3339, IsString } from 'class-validator';
import { IsExistingDateTime } from '../../validation/date-time.validators.js';

export const SINCE_RULE = 'since must be an RFC 3339 date-time such as 2026-11-24T12:00:00Z';

/** The body of POST /webhooks/{id}/recover. Any other property is a 400 that names it. */
@ApiSchema({
  name: 'RecoverDeliveries',
  description: 'Which failed deliveries to send again',
})
export class RecoverDeliveriesDto {
  @ApiProperty({
    description:
      'An RFC 3339 date-time: every failed delivery of the subscription created at or after it is sent again',
    format: 'date-time',
    minLength: 1,
    example: '2026-11-24T12:00:00Z',
  })
  @IsExistingDateTime()
  @IsString({ message: SINCE_RULE })
  @IsRFC3339({ message: SINCE_RULE })
  since!: string;
}
