import pg from 'pg';
import { QueryFailedError } from 'typeorm';
import { describe, expect, it } from 'vitest';
import {
  DeadlineExceededError,
  DeadlineInStatementError,
  NoConnectionError,
} from './database-errors.js';
import { retryOnce } from './database-retry.js';
import { RequestScope } from './request-scope.js';

function readOnly(): QueryFailedError {
  const error = new pg.DatabaseError(
    'cannot execute DELETE in a read-only transaction',
    1,
    'error',
  );
  error.code = '25006';
  error.severity = 'ERROR';
  return new QueryFailedError('DELETE …', [], error);
}
const lostMidStatement = () =>
  new QueryFailedError('DELETE …', [], new Error('Connection terminated unexpectedly'));

/** Work that fails with each of `errors` in turn, then succeeds; counts its runs. */
function failing(...errors: Error[]) {
  const work = async () => {
    work.runs += 1;
    const error = errors.shift();
    if (error) throw error;
    return 'done';
  };
  work.runs = 0;
  return work;
}

describe('retryOnce', () => {
  it('runs repeatable work again after any outage, once', async () => {
    const work = failing(lostMidStatement());
    await expect(retryOnce('repeatable', work, RequestScope.background)).resolves.toBe('done');
    expect(work.runs).toBe(2);
    const twice = failing(lostMidStatement(), lostMidStatement());
    await expect(retryOnce('repeatable', twice, RequestScope.background)).rejects.toBeInstanceOf(
      QueryFailedError,
    );
    expect(twice.runs).toBe(2);
  });

  it('runs other work again only when nothing of it ran', async () => {
    const refused = failing(readOnly());
    await expect(retryOnce('if-nothing-ran', refused, RequestScope.background)).resolves.toBe(
      'done',
    );
    const unconnected = failing(new NoConnectionError('no host'));
    await expect(retryOnce('if-nothing-ran', unconnected, RequestScope.background)).resolves.toBe(
      'done',
    );
    const unknown = failing(lostMidStatement());
    await expect(
      retryOnce('if-nothing-ran', unknown, RequestScope.background),
    ).rejects.toBeInstanceOf(QueryFailedError);
    expect(unknown.runs).toBe(1);
  });

  it('never runs again what is not an outage, nor past the deadline', async () => {
    const bug = failing(new TypeError('a bug'));
    await expect(retryOnce('repeatable', bug, RequestScope.background)).rejects.toBeInstanceOf(
      TypeError,
    );
    expect(bug.runs).toBe(1);
    const late = failing(new DeadlineExceededError());
    await expect(retryOnce('repeatable', late, RequestScope.background)).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    expect(late.runs).toBe(1);
    // Whatever the clock says: the deadline's read timeout can fire a moment before it.
    const timedOut = failing(new QueryFailedError('SELECT …', [], new DeadlineInStatementError()));
    await expect(
      retryOnce('repeatable', timedOut, RequestScope.until(Date.now() + 60_000)),
    ).rejects.toBeInstanceOf(QueryFailedError);
    expect(timedOut.runs).toBe(1);
    const spent = failing(readOnly());
    await expect(
      retryOnce('repeatable', spent, RequestScope.until(Date.now() - 1)),
    ).rejects.toBeInstanceOf(QueryFailedError);
    expect(spent.runs).toBe(1);
  });

  it("leaves SQLite's busy database to its own wait", async () => {
    const busy = new QueryFailedError(
      'INSERT …',
      [],
      Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }),
    );
    const work = failing(busy);
    await expect(retryOnce('repeatable', work, RequestScope.background)).rejects.toBe(busy);
    expect(work.runs).toBe(1);
  });
});
