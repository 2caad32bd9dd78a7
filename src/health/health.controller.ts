import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../auth/public.decorator.js';
import { ErrorDto } from '../common/errors/error.dto.js';
import type { Environment } from '../config/environment.js';
import { ShutdownState } from '../lifecycle/shutdown-state.js';

const STATUS_OK = {
  schema: { type: 'object', properties: { status: { type: 'string', example: 'ok' } } },
};

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
    private readonly config: ConfigService<Environment, true>,
  ) {}

  @Get('live')
  @ApiOperation({ operationId: 'live', summary: 'The process is up' })
  @ApiOkResponse({ description: 'Alive', ...STATUS_OK })
  live(): { status: string } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'ready',
    summary: 'The service takes requests',
    description:
      'Ready while the database answers a ping in time and the process is not shutting down.',
  })
  @ApiOkResponse({ description: 'Ready', ...STATUS_OK })
  @ApiServiceUnavailableResponse({
    type: ErrorDto,
    description: 'Not ready: shutting down, or the database does not answer',
  })
  async ready(): Promise<{ status: string }> {
    if (this.shutdown.shuttingDown)
      throw new ServiceUnavailableException('not ready: shutting down');
    try {
      await this.health.check([
        () =>
          this.database.pingCheck('database', {
            timeout: this.config.get('HEALTH_DB_TIMEOUT_MS', { infer: true }),
          }),
      ]);
    } catch {
      throw new ServiceUnavailableException('not ready: the database does not answer');
    }
    return { status: 'ok' };
  }
}
