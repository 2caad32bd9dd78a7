import { BooleanVariable, IntVariable } from '../config/environment.decorators.js';
import { Variable } from '../config/variable-metadata.js';

/**
 * The per-owner request quota: on or off, its window and its size. One part of the service's
 * Environment (src/environment.ts).
 */
export class RateLimitVariables {
  @Variable(
    'Rate limits',
    'Apply the per-owner request quota, the failed-authentication budget and the pace of refusals.',
  )
  @BooleanVariable()
  RATE_LIMIT_ENABLED = true;

  @Variable('Rate limits', 'The window the quota and the budget count over.')
  @IntVariable(1000, 3_600_000)
  RATE_LIMIT_WINDOW_MS = 60_000;

  @Variable(
    'Rate limits',
    'Requests per window for one token owner (or one client address without a valid token).',
  )
  @IntVariable(1, 10_000_000)
  RATE_LIMIT_MAX = 1200;
}
