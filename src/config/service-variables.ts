import { HttpVariables } from '../http/http.variables.js';
import { InvalidEnvironmentError } from './load-environment.js';
import type { ProcessVariables } from './process.variables.js';
import { describeVariables } from './variable-metadata.js';

/**
 * What the service needs beyond each variable's own rule, checked by
 * createApp only: the command-line tools (tokens, the migrations job) read
 * the same environment without these needs.
 *
 * In production an instance that serves the API needs CURSOR_SECRET: with a
 * key of its own, each instance would refuse the next links of the others.
 */
export function checkServiceVariables(env: ProcessVariables & HttpVariables): void {
  if (env.NODE_ENV !== 'production' || env.APP_ROLE === 'worker') return;
  if (env.CURSOR_SECRET !== undefined) return;
  const allowed = describeVariables(HttpVariables).find(
    (variable) => variable.name === 'CURSOR_SECRET',
  )?.allowed;
  throw new InvalidEnvironmentError([
    {
      variable: 'CURSOR_SECRET',
      message:
        'CURSOR_SECRET: not set, but required in production when APP_ROLE is all or api ' +
        `(every instance must key paging cursors alike); allowed: ${allowed}`,
    },
  ]);
}
