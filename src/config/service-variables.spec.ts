import { describe, expect, it } from 'vitest';
import { validateEnvironment } from '../environment.js';
import { InvalidEnvironmentError } from './load-environment.js';
import { checkServiceVariables } from './service-variables.js';

const SECRET = 'a-cursor-secret-of-at-least-32-bytes!';

/** The problems checkServiceVariables stops the service with; none when it starts. */
function problemsOf(raw: Record<string, string>): unknown[] {
  try {
    checkServiceVariables(validateEnvironment(raw));
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidEnvironmentError);
    return (error as InvalidEnvironmentError).problems;
  }
  return [];
}

describe('checkServiceVariables', () => {
  it('requires CURSOR_SECRET in production from an instance that serves the API, in one line naming it', () => {
    for (const role of ['all', 'api']) {
      expect(problemsOf({ NODE_ENV: 'production', APP_ROLE: role })).toEqual([
        {
          variable: 'CURSOR_SECRET',
          message: expect.stringMatching(
            /^CURSOR_SECRET: not set, but required in production when APP_ROLE is all or api .*; allowed: 32 to 512 printable ASCII characters/,
          ) as string,
        },
      ]);
    }
  });

  it('lets a worker, any instance outside production, and one with the secret start', () => {
    expect(problemsOf({ NODE_ENV: 'production', APP_ROLE: 'worker' })).toEqual([]);
    expect(problemsOf({ NODE_ENV: 'development' })).toEqual([]);
    expect(problemsOf({ NODE_ENV: 'test', CURSOR_SECRET: '' })).toEqual([]);
    expect(problemsOf({ NODE_ENV: 'production', CURSOR_SECRET: SECRET })).toEqual([]);
  });
});
