import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsInt64 } from '../../validation/int64.validators.js';
import { IsStorableText } from '../../validation/text.validators.js';
import { NAME_RULE, TAG_RULE } from './plant.dto.js';

/** The body of POST /plants. Any other property is a 400 that names it. */
@ApiSchema({
  name: 'NewPlant',
  description:
    'The body sent when creating a plant: every field of Plant, with the same rules, and its id. "tag": null is taken as no tag.',
})
export class NewPlantDto {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    description:
      'Identification number of the plant, unique per owner; any signed 64-bit integer, sent as a JSON number',
    example: 1,
  })
  @IsInt64()
  id!: bigint;

  @ApiProperty({
    description: 'The name of the plant',
    minLength: NAME_RULE.minCodePoints,
    maxLength: NAME_RULE.maxCodePoints,
    example: 'Monstera deliciosa',
  })
  @IsStorableText(NAME_RULE)
  name!: string;

  @ApiPropertyOptional({
    type: 'string',
    description: 'Tag that specifies the type of the plant',
    maxLength: TAG_RULE.maxCodePoints,
    example: 'tropical',
  })
  @IsOptional()
  @IsStorableText(TAG_RULE)
  tag?: string | null;
}
