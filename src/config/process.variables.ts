import { IntVariable, OneOfVariable } from './environment.decorators.js';
import { Variable } from './variable-metadata.js';

const NODE_ENVS = ['development', 'test', 'production'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

const APP_ROLES = ['all', 'api', 'worker'] as const;
export type AppRole = (typeof APP_ROLES)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/**
 * What every process of the service reads about itself: its kind of deployment, its role, its
 * logging and its shutdown. One part of the service's Environment (src/environment.ts).
 */
export class ProcessVariables {
  @Variable(
    'Process',
    'The kind of deployment. In development logs are pretty-printed; outside production a first ' +
      'token is issued and logged when none exists.',
  )
  @OneOfVariable(NODE_ENVS)
  NODE_ENV: NodeEnv = 'development';

  @Variable(
    'Process',
    'What the instance does: `api` serves the API and sends no webhooks, `worker` sends ' +
      'webhooks (serving only health and metrics), `all` does both.',
  )
  @OneOfVariable(APP_ROLES)
  APP_ROLE: AppRole = 'all';

  @Variable(
    'Process',
    'Least severe level logged (JSON lines on stdout, pretty-printed in development).',
  )
  @OneOfVariable(LOG_LEVELS)
  LOG_LEVEL: LogLevelName = 'info';

  @Variable(
    'Process',
    'After SIGTERM, how long the instance keeps serving (readiness already failing, every ' +
      'answer with Connection: close) before it stops accepting, so that a load balancer takes ' +
      'it out first. SIGINT skips it. Keep it at least HTTP_KEEP_ALIVE_TIMEOUT_MS: a connection ' +
      'idle since before SIGTERM is then closed by a keep-alive timer during the drain, not cut ' +
      'when the listener goes while its client may be sending on it.',
  )
  @IntVariable(0, 600_000)
  SHUTDOWN_DRAIN_MS = 5000;

  @Variable(
    'Process',
    'How long requests in flight may take to finish once the instance stops accepting.',
  )
  @IntVariable(0, 600_000)
  SHUTDOWN_TIMEOUT_MS = 10_000;
}
