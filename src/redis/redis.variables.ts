import { OptionalVariable, PatternVariable } from '../config/environment.decorators.js';
import { Variable } from '../config/variable-metadata.js';

/**
 * The Redis that every instance shares its counters through. One part of the service's Environment
 * (src/environment.ts).
 */
export class RedisVariables {
  @Variable(
    'Rate limits',
    'Redis for the counters, shared by every instance; unset: each instance counts in memory.',
    { secret: true },
  )
  @OptionalVariable()
  @PatternVariable('URL', /^rediss?:\/\/.+/, 'redis://host:port[/db] or rediss://…')
  REDIS_URL?: string = undefined;
}
