import { describe, expect, it } from 'vitest';
import { redisOrMemory } from './redis-or-memory.js';

describe('redisOrMemory', () => {
  it("gives Redis's answer while Redis answers, and does not count locally", async () => {
    let local = 0;
    expect(
      await redisOrMemory(
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
    expect(await redisOrMemory(unreachable, () => 'local')).toBe('local');
    expect(await redisOrMemory(unreachable, async () => 'local, later')).toBe('local, later');
  });
});
