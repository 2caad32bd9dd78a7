import { IntVariable } from '../config/environment.decorators.js';
import { Variable } from '../config/variable-metadata.js';

/**
 * The failed-authentication budget per client address and the pace of refusals (counted over
 * RATE_LIMIT_WINDOW_MS). One part of the service's Environment (src/environment.ts).
 */
export class AuthLimitVariables {
  @Variable(
    'Rate limits',
    'Failed authentications per window from one client address before it gets 429s.',
  )
  @IntVariable(1, 1_000_000)
  AUTH_FAILURE_LIMIT = 20;

  @Variable(
    'Rate limits',
    'Refusals (401, 429) per second to one client address answered at once; past it, ' +
      'each comes AUTH_REFUSAL_DELAY_MS late. Authenticated requests are never slowed.',
  )
  @IntVariable(1, 1_000_000)
  AUTH_REFUSAL_RATE = 20;

  @Variable(
    'Rate limits',
    'How late a refusal past AUTH_REFUSAL_RATE is answered (at most 10 s: a held request ' +
      'keeps its connection).',
  )
  @IntVariable(1, 10_000)
  AUTH_REFUSAL_DELAY_MS = 1000;
}
