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

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  @Get('live')
  @ApiOperation({ operationId: 'live', summary: 'The process is up' })
  @ApiOkResponse({
    description: 'Alive',
    schema: { type: 'object', properties: { status: { type: 'string', example: 'ok' } } },
  })
  live(): { status: string } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ operationId: 'ready', summary: 'The database answers' })
  @ApiOkResponse({
    description: 'Ready',
    schema: { type: 'object', properties: { status: { type: 'string', example: 'ok' } } },
  })
  @ApiServiceUnavailableResponse({ type: ErrorDto, description: 'The database does not answer' })
  async ready(): Promise<{ status: string }> {
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw new ServiceUnavailableException('the database does not answer');
    }
    return { status: 'ok' };
  }
}
