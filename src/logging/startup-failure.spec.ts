import { afterEach, describe, expect, it, vi } from 'vitest';
import { validateEnvironment } from '../environment.js';
import { logStartupFailure } from './startup-failure.js';

function failure(raw: Record<string, unknown>): unknown {
  try {
    validateEnvironment(raw);
  } catch (error) {
    return error;
  }
  throw new Error('the environment was accepted');
}

describe('logStartupFailure on a terminal', () => {
  const wasTTY = process.stdout.isTTY;
  afterEach(() => {
    process.stdout.isTTY = wasTTY;
    vi.restoreAllMocks();
  });

  it('writes one plain line per bad variable, and nothing else', () => {
    process.stdout.isTTY = true;
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    logStartupFailure(failure({ PORT: 'abc', LOG_LEVEL: 'loud' }));
    expect(printed.mock.calls).toEqual([
      [
        'LOG_LEVEL: "loud" is not one of the allowed values; allowed: one of fatal, error, warn, info, debug, trace, silent',
      ],
      ['PORT: "abc" is not a whole number; allowed: an integer from 0 to 65535'],
    ]);
  });

  it('writes any other failure as its message alone', () => {
    process.stdout.isTTY = true;
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    logStartupFailure(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    expect(printed.mock.calls).toEqual([['connect ECONNREFUSED 127.0.0.1:5432']]);
  });
});
