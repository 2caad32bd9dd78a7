import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export const LIMIT_MAX = 2_147_483_647;
const LIMIT_RULE = `limit must be an integer from 0 to ${LIMIT_MAX}`;

/** The query of GET /plants. */
export class ListPlantsQuery {
  @ApiPropertyOptional({
    type: 'integer',
    format: 'int32',
    minimum: 0,
    maximum: LIMIT_MAX,
    description: 'The maximum number of plants to return; without it, all of them',
    example: 20,
  })
  @IsOptional()
  // Only plain decimal digits count: "1.5", "-1", "1e3" and "" stay strings and fail.
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value,
  )
  @IsInt({ message: LIMIT_RULE })
  @Min(0, { message: LIMIT_RULE })
  @Max(LIMIT_MAX, { message: LIMIT_RULE })
  limit?: number;
}
