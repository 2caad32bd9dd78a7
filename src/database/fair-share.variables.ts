import { BooleanVariable, IntVariable } from '../config/environment.decorators.js';
import { Variable } from '../config/variable-metadata.js';

/**
 * The fair share between owners: requests in flight per owner, and the pool's connections handed
 * to the owner holding the fewest. One part of the service's Environment (src/environment.ts).
 */
export class FairShareVariables {
  @Variable(
    'Rate limits',
    "Share the service between owners: each owner's requests in flight bounded " +
      '(FAIR_SHARE_MAX_IN_FLIGHT), and on PostgreSQL, while owners wait for a pooled ' +
      'connection, each freed one goes to the owner holding the fewest.',
  )
  @BooleanVariable()
  FAIR_SHARE_ENABLED = true;

  @Variable(
    'Rate limits',
    "One owner's requests in flight in an instance; the next is a 429 with Retry-After " +
      'until one of them ends (a streamed list counts until its last byte is written).',
  )
  @IntVariable(1, 1_000_000)
  FAIR_SHARE_MAX_IN_FLIGHT = 64;
}
