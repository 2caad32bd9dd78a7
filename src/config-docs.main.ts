import { writeFileSync } from 'node:fs';
import {
  CONFIGURATION_REFERENCE_PATH,
  renderConfigurationReference,
} from './config/configuration-reference.js';
import { ENVIRONMENT_PARTS } from './environment.js';

/**
 * `npm run config:docs`: writes docs/CONFIGURATION.md from the declarations
 * of the variables classes src/environment.ts composes (configuration-reference.spec.ts fails while
 * the committed file differs).
 */
const path = process.argv[2] ?? CONFIGURATION_REFERENCE_PATH;
writeFileSync(path, renderConfigurationReference(ENVIRONMENT_PARTS));
process.stderr.write(`Wrote ${path}\n`);
