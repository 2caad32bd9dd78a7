import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

export const NAME_RULE = { minCodePoints: 1, maxCodePoints: 255 };
export const TAG_RULE = { minCodePoints: 0, maxCodePoints: 255 };

/** A plant as the API returns it: name and tag, never the id. */
@ApiSchema({ name: 'Plant' })
export class PlantDto {
  @ApiProperty({
    description: 'The name of the plant',
    minLength: NAME_RULE.minCodePoints,
    maxLength: NAME_RULE.maxCodePoints,
    example: 'Monstera deliciosa',
  })
  name: string;

  @ApiPropertyOptional({
    description: 'Tag that specifies the type of the plant; absent when the plant has none',
    maxLength: TAG_RULE.maxCodePoints,
    example: 'tropical',
  })
  tag?: string;

  constructor(name: string, tag?: string | null) {
    this.name = name;
    // Left out, never null, when there is no tag.
    if (tag !== null && tag !== undefined) this.tag = tag;
  }
}
