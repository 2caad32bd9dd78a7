import { QueryFailedError } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { RetriedOnce } from './retried-once.decorator.js';

const lostMidStatement = () =>
  new QueryFailedError('DELETE …', [], new Error('Connection terminated unexpectedly'));

/** A service whose database work fails with each of `failures` in turn, then answers. */
class Service {
  runs = 0;

  constructor(private readonly failures: Error[]) {}

  @RetriedOnce('repeatable')
  async read(owner: string): Promise<string> {
    return this.work(owner);
  }

  @RetriedOnce('if-nothing-ran')
  async remove(owner: string): Promise<string> {
    return this.work(owner);
  }

  private async work(owner: string): Promise<string> {
    this.runs += 1;
    const failure = this.failures.shift();
    if (failure) throw failure;
    return `done for ${owner}`;
  }
}

describe('RetriedOnce', () => {
  it('runs a repeatable method again after an outage, with its instance and arguments', async () => {
    const service = new Service([lostMidStatement()]);
    await expect(service.read('alice')).resolves.toBe('done for alice');
    expect(service.runs).toBe(2);
  });

  it('does not repeat a write whose statement may have run', async () => {
    const service = new Service([lostMidStatement()]);
    await expect(service.remove('alice')).rejects.toBeInstanceOf(QueryFailedError);
    expect(service.runs).toBe(1);
  });

  it('passes on what is not an outage at once', async () => {
    const service = new Service([new TypeError('a bug')]);
    await expect(service.read('alice')).rejects.toBeInstanceOf(TypeError);
    expect(service.runs).toBe(1);
  });
});
