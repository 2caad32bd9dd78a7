import { BooleanVariable, IntVariable, PatternVariable } from '../config/environment.decorators.js';
import { Variable } from '../config/variable-metadata.js';

/** One duration (units ms, s, m, h, d), and a comma-separated list of them. */
const DURATION_PATTERN = /^\s*\d{1,9}(ms|s|m|h|d)\s*$/;
const DURATIONS_PATTERN = /^\s*\d{1,9}(ms|s|m|h|d)(\s*,\s*\d{1,9}(ms|s|m|h|d))*\s*$/;

/**
 * The webhooks' variables: the retry schedule, the receivers allowed, the dispatcher's pace and
 * share, secrets and retention. One part of the service's Environment (src/environment.ts).
 */
export class WebhookVariables {
  @Variable(
    'Webhooks',
    'Waits between delivery attempts of a webhook; after the last one it is marked failed.',
  )
  @PatternVariable(
    'durations',
    DURATIONS_PATTERN,
    'comma-separated durations such as 5s,30s,2m,10m,1h,6h,24h (units ms, s, m, h, d)',
  )
  WEBHOOK_RETRY_SCHEDULE = '5s,30s,2m,10m,1h,6h,24h';

  @Variable(
    'Webhooks',
    'How long a delivery attempt may take: its host name resolved, then the receiver ' +
      'connected to and answering (headers and body).',
  )
  @IntVariable(100, 120_000)
  WEBHOOK_TIMEOUT_MS = 10_000;

  @Variable(
    'Webhooks',
    'Allow http:// webhook URLs (local development, tests; logged as a warning at start-up); ' +
      'otherwise https only.',
  )
  @BooleanVariable()
  WEBHOOK_ALLOW_HTTP = false;

  @Variable(
    'Webhooks',
    'Allow webhook receivers on loopback, private, link-local and other non-public addresses ' +
      '(logged as a warning at start-up).',
  )
  @BooleanVariable()
  WEBHOOK_ALLOW_PRIVATE_TARGETS = false;

  @Variable(
    'Webhooks',
    'How often each instance looks for due deliveries (a local create wakes it at once).',
  )
  @IntVariable(10, 60_000)
  WEBHOOK_POLL_INTERVAL_MS = 1000;

  @Variable('Webhooks', 'Deliveries one instance sends at the same time.')
  @IntVariable(1, 256)
  WEBHOOK_CONCURRENCY = 16;

  @Variable(
    'Webhooks',
    "Deliveries one instance sends to one subscription at the same time; an owner's " +
      'subscriptions together hold at most half of WEBHOOK_CONCURRENCY (at least 1), so that ' +
      'receivers that hang hold up no one else.',
  )
  @IntVariable(1, 256)
  WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION = 4;

  @Variable(
    'Webhooks',
    'How long a claimed delivery stays with the instance that claimed it; past that, another ' +
      'instance may take it (the first one is presumed dead). Never shorter than ' +
      'WEBHOOK_TIMEOUT_MS plus a second.',
  )
  @IntVariable(1000, 3_600_000)
  WEBHOOK_LEASE_MS = 60_000;

  @Variable(
    'Webhooks',
    'Webhook subscriptions one owner may have (the next create is a 409): bounds ' +
      'GET /webhooks and the rows each plant create writes to the outbox.',
  )
  @IntVariable(1, 1000)
  WEBHOOK_MAX_SUBSCRIPTIONS = 20;

  @Variable(
    'Webhooks',
    'After a secret rotation, how long deliveries are signed with the old secret too.',
  )
  @PatternVariable('duration', DURATION_PATTERN, 'a duration such as 24h (units ms, s, m, h, d)')
  WEBHOOK_SECRET_OVERLAP = '24h';

  @Variable(
    'Webhooks',
    'How long a delivered or failed delivery is kept before the dispatcher deletes it.',
  )
  @PatternVariable('duration', DURATION_PATTERN, 'a duration such as 30d (units ms, s, m, h, d)')
  WEBHOOK_RETENTION = '30d';
}
