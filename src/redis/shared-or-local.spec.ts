import { describe, expect, it } from 'vitest';
import { sharedOrLocal } from './shared-or-local.js';

describe('sharedOrLocal', () => {
  it("gives Redis's answer while Redis answers, and does not count locally", async () => {
    let local = 0;
    expect(
      await sharedOrLocal(
        async () => 'shared',
        () => `local ${++local}`,
      ),
    ).toBe('shared');
    expect(local).toBe(0);
  });

  it('counts locally when the Redis command fails', async () => {
    const unreachable = async (): Promise<string> => {
      throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
    };
    expect(await sharedOrLocal(unreachable, () => 'local')).toBe('local');
    expect(await sharedOrLocal(unreachable, async () => 'local, later')).toBe('local, later');
  });
});
