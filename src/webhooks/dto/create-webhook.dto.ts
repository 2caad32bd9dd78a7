import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsStorableText } from '../../validation/text.validators.js';

const URL_RULE = { minCodePoints: 1, maxCodePoints: 2048 };
const DESCRIPTION_RULE = { minCodePoints: 0, maxCodePoints: 255 };

/** The body of POST /webhooks. Any other property is a 400 that names it. */
@ApiSchema({
  name: 'NewWebhook',
  description: 'A subscription to plant-created events of the caller',
})
export class CreateWebhookDto {
  @ApiProperty({
    description:
      'Where events are sent (POST). https, absolute, without user name, password or fragment, on a public host; http and non-public hosts only where the service allows them',
    minLength: URL_RULE.minCodePoints,
    maxLength: URL_RULE.maxCodePoints,
    example: 'https://receiver.example.com/hooks/plants',
  })
  @IsStorableText(URL_RULE)
  url!: string;

  @ApiPropertyOptional({
    type: 'string',
    description: 'A note for the caller',
    maxLength: DESCRIPTION_RULE.maxCodePoints,
    example: 'inventory sync',
  })
  @IsOptional()
  @IsStorableText(DESCRIPTION_RULE)
  description?: string | null;
}
