import { ApiProperty } from '@nestjs/swagger';
import { IsInt64, ToBigInt } from '../../common/validation/int64.validators.js';

/** The path of DELETE /plants/{id}. */
export class PlantIdParams {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    description: 'The id of the plant to delete',
    example: 1,
  })
  @ToBigInt()
  @IsInt64()
  id!: bigint;
}
