import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Public } from '../auth/public.decorator.js';
import { ErrorDto } from '../common/errors/error.dto.js';
import { HealthStatusDto } from './health-status.dto.js';

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  @Get('live')
  @ApiOperation({
    operationId: 'live',
    summary: 'The process is up',
    description:
      'Liveness probe: answers 200 while the process serves HTTP, whatever the state of the database. Needs no token.',
    // Public: an empty requirement says so in the document (no bearerAuth).
    security: [],
  })
  @ApiOkResponse({ type: HealthStatusDto, description: 'Alive', example: new HealthStatusDto() })
  live(): HealthStatusDto {
    return new HealthStatusDto();
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'ready',
    summary: 'The database answers',
    description:
      'Readiness probe: answers 200 when the database answers a query, else 503. Needs no token.',
    security: [],
  })
  @ApiOkResponse({ type: HealthStatusDto, description: 'Ready', example: new HealthStatusDto() })
  @ApiServiceUnavailableResponse({
    type: ErrorDto,
    description: 'The database does not answer',
    // The error filter never words a 5xx from its exception's message.
    example: new ErrorDto(503, 'internal server error'),
  })
  async ready(): Promise<HealthStatusDto> {
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw new ServiceUnavailableException('the database does not answer');
    }
    return new HealthStatusDto();
  }
}
