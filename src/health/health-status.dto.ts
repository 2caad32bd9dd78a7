import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** The body of a successful health probe. */
@ApiSchema({ name: 'HealthStatus' })
export class HealthStatusDto {
  @ApiProperty({
    enum: ['ok'],
    minLength: 2,
    description: 'Always "ok" when the probe succeeds',
    example: 'ok',
  })
  readonly status = 'ok' as const;
}
