import { writeFileSync } from 'node:fs';
import {
  CONFIGURATION_REFERENCE_PATH,
  renderConfigurationReference,
} from './config/configuration-reference.js';

/**
 * `npm run config:docs`: writes docs/CONFIGURATION.md from the declarations
 * in src/config/environment.ts (configuration-reference.spec.ts fails while
 * the committed file differs).
 */
const path = process.argv[2] ?? CONFIGURATION_REFERENCE_PATH;
writeFileSync(path, renderConfigurationReference());
process.stderr.write(`Wrote ${path}\n`);
