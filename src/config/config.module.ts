import type { DynamicModule } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';

/**
 * @nestjs/config holding the Environment that load-environment.ts validated
 * once at startup (src/environment.ts). Each part reads its own variables
 * through ConfigService<ItsVariables, true>, e.g. ConfigService<HttpVariables, true>.
 */
export function configModule(env: object): Promise<DynamicModule> {
  return ConfigModule.forRoot({
    isGlobal: true,
    cache: true,
    ignoreEnvFile: true,
    skipProcessEnv: true,
    load: [() => ({ ...env })],
  });
}
