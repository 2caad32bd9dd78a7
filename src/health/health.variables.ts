import { IntVariable } from '../config/environment.decorators.js';
import { Variable } from '../config/variable-metadata.js';

/**
 * How long readiness waits for the database. One part of the service's Environment
 * (src/environment.ts).
 */
export class HealthVariables {
  @Variable('Health and metrics', 'How long /health/ready waits for the database.')
  @IntVariable(50, 60_000)
  HEALTH_DB_TIMEOUT_MS = 1000;
}
