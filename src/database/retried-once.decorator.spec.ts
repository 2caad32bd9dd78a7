import { QueryFailedError } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { RequestScope } from './request-scope.js';
import { RetriedOnce } from './retried-once.decorator.js';

const lostMidStatement = () =>
  new QueryFailedError('DELETE …', [], new Error('Connection terminated unexpectedly'));

const BACKGROUND = RequestScope.background;

/** A service whose database work fails with each of `failures` in turn, then answers. */
class Service {
  runs = 0;

  constructor(private readonly failures: Error[]) {}

  @RetriedOnce('repeatable')
  async read(owner: string, _scope: RequestScope): Promise<string> {
    return this.work(owner);
  }

  @RetriedOnce('if-nothing-ran')
  async remove(owner: string, _scope: RequestScope): Promise<string> {
    return this.work(owner);
  }

  @RetriedOnce('repeatable')
  async unscoped(owner: string): Promise<string> {
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
    await expect(service.read('alice', BACKGROUND)).resolves.toBe('done for alice');
    expect(service.runs).toBe(2);
  });

  it('does not repeat a write whose statement may have run', async () => {
    const service = new Service([lostMidStatement()]);
    await expect(service.remove('alice', BACKGROUND)).rejects.toBeInstanceOf(QueryFailedError);
    expect(service.runs).toBe(1);
  });

  it('passes on what is not an outage at once', async () => {
    const service = new Service([new TypeError('a bug')]);
    await expect(service.read('alice', BACKGROUND)).rejects.toBeInstanceOf(TypeError);
    expect(service.runs).toBe(1);
  });

  it("takes the deadline from the method's RequestScope argument", async () => {
    const inTime = new Service([lostMidStatement()]);
    await expect(inTime.read('alice', RequestScope.until(Date.now() + 60_000))).resolves.toBe(
      'done for alice',
    );
    expect(inTime.runs).toBe(2);
    const spent = new Service([lostMidStatement()]);
    await expect(spent.read('alice', RequestScope.until(Date.now() - 1))).rejects.toBeInstanceOf(
      QueryFailedError,
    );
    expect(spent.runs).toBe(1);
  });

  it('refuses a method called without a RequestScope, rather than run it without a deadline', async () => {
    const service = new Service([]);
    await expect(service.unscoped('alice')).rejects.toThrow('takes the RequestScope');
    expect(service.runs).toBe(0);
  });
});
