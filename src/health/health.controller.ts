import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../http/public.decorator.js';
import { ErrorDto } from '../errors/error.dto.js';
import type { HealthVariables } from './health.variables.js';
import { ShutdownState } from '../lifecycle/shutdown-state.js';
import { HealthStatusDto } from './health-status.dto.js';

/** Probes for orchestrators and the compose healthcheck: public and never rate-limited. */
@ApiTags('health')
@Public()
@SkipThrottle()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly shutdown: ShutdownState,
    private readonly config: ConfigService<HealthVariables, true>,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

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
    summary: 'The service takes requests',
    description:
      'Readiness probe: answers 200 while the database answers a ping in time and the process is not shutting down, else 503. Needs no token.',
    security: [],
  })
  @ApiOkResponse({ type: HealthStatusDto, description: 'Ready', example: new HealthStatusDto() })
  @ApiServiceUnavailableResponse({
    type: ErrorDto,
    description: 'Not ready: shutting down, or the database does not answer in time',
    headers: {
      'Retry-After': {
        description: 'Seconds to wait before asking again',
        required: true,
        schema: { type: 'string' },
      },
    },
    example: new ErrorDto(503, 'not ready: the database does not answer'),
  })
  async ready(): Promise<HealthStatusDto> {
    if (this.shutdown.shuttingDown) {
      throw new ServiceUnavailableException('not ready: shutting down');
    }
    try {
      await this.health.check([
        () =>
          this.database.pingCheck('database', {
            // Given, not looked up: the indicator's own lookup imports @nestjs/typeorm by
            // name at run time, a second copy beside the one bundled into
            // dist/bundle/main.js, whose DataSource token this application never registered.
            connection: this.dataSource,
            timeout: this.config.get('HEALTH_DB_TIMEOUT_MS', { infer: true }),
          }),
      ]);
    } catch {
      throw new ServiceUnavailableException('not ready: the database does not answer');
    }
    return new HealthStatusDto();
  }
}
