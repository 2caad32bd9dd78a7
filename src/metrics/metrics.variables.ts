import { BooleanVariable } from '../config/environment.decorators.js';
import { Variable } from '../config/variable-metadata.js';

/**
 * Whether /metrics is served. One part of the service's Environment (src/environment.ts).
 */
export class MetricsVariables {
  @Variable('Health and metrics', 'Serve Prometheus metrics at /metrics.')
  @BooleanVariable()
  METRICS_ENABLED = true;
}
