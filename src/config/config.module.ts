import type { DynamicModule } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import type { Environment } from './environment.js';

/**
 * @nestjs/config holding the Environment that load-environment.ts validated
 * once at startup. Read it through ConfigService<Environment, true>.
 */
export function configModule(env: Environment): Promise<DynamicModule> {
  return ConfigModule.forRoot({
    isGlobal: true,
    cache: true,
    ignoreEnvFile: true,
    skipProcessEnv: true,
    load: [() => ({ ...env })],
  });
}
