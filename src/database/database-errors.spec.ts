import pg from 'pg';
import { QueryFailedError, QueryRunnerAlreadyReleasedError } from 'typeorm';
import { describe, expect, it } from 'vitest';
import {
  DeadlineExceededError,
  DeadlineInStatementError,
  isDatabaseUnavailable,
  isPostgresUniqueViolationOn,
  NoConnectionError,
  nothingRan,
  permanentFailure,
  poisonsConnection,
  signalsFailover,
} from './database-errors.js';
import { MalformedDatabaseUrlError } from './postgres-url.js';

/** An ErrorResponse as node-postgres makes it from the server's message. */
function serverError(code: string, message = 'from the server'): pg.DatabaseError {
  const error = new pg.DatabaseError(message, message.length, 'error');
  error.code = code;
  error.severity = code.startsWith('57P') ? 'FATAL' : 'ERROR';
  return error;
}

/** As a repository sees it: TypeORM wraps the driver's error. */
const fromQuery = (error: Error) => new QueryFailedError('SELECT 1', [], error);

const socketError = (code: string) => Object.assign(new Error(`socket: ${code}`), { code });

describe('database errors', () => {
  describe.each([
    ['25006 read-only (a demoted primary)', serverError('25006')],
    ['57P01 admin shutdown', serverError('57P01')],
    ['57P02 crash shutdown', serverError('57P02')],
    ['57P03 starting up', serverError('57P03')],
    ['08006 connection failure', serverError('08006')],
    ['08P01 protocol violation', serverError('08P01', 'server conn crashed?')],
    ['53300 too many connections', serverError('53300')],
  ])('the server answers %s', (_name, error) => {
    it('is a 503, and nothing of the statement ran', () => {
      expect(isDatabaseUnavailable(fromQuery(error))).toBe(true);
      expect(nothingRan(fromQuery(error))).toBe(true);
    });
  });

  it.each([
    ['a connection ended mid-query', new Error('Connection terminated unexpectedly')],
    ['a read timeout', new Error('Query read timeout')],
    ['the deadline during a statement', new DeadlineInStatementError()],
    ['a reset socket', socketError('ECONNRESET')],
    ['a query runner released under a transaction', new QueryRunnerAlreadyReleasedError()],
  ])('%s is a 503 whose outcome is unknown', (_name, error) => {
    expect(isDatabaseUnavailable(fromQuery(error))).toBe(true);
    expect(nothingRan(fromQuery(error))).toBe(false);
    expect(poisonsConnection(error)).toBe(true);
  });

  it('no connection and a spent deadline are 503s in which nothing ran', () => {
    for (const error of [new NoConnectionError('none'), new DeadlineExceededError()]) {
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect(nothingRan(error)).toBe(true);
    }
    const pooled = new Error('timeout exceeded when trying to connect');
    expect(isDatabaseUnavailable(pooled)).toBe(true);
  });

  it('a failover retires connections; a bad statement leaves its connection in use', () => {
    for (const code of ['25006', '57P01', '57P02', '57P03']) {
      expect(signalsFailover(fromQuery(serverError(code)))).toBe(true);
      expect(poisonsConnection(serverError(code))).toBe(true);
    }
    expect(poisonsConnection(serverError('08006'))).toBe(true);
    expect(signalsFailover(serverError('08006'))).toBe(false);
    for (const code of ['23505', '42601', '57014', '22P02']) {
      expect(poisonsConnection(serverError(code))).toBe(false);
      expect(signalsFailover(serverError(code))).toBe(false);
    }
  });

  it('a unique violation or a syntax error is not an outage', () => {
    expect(isDatabaseUnavailable(fromQuery(serverError('23505')))).toBe(false);
    expect(isDatabaseUnavailable(fromQuery(serverError('42601')))).toBe(false);
    expect(isDatabaseUnavailable(new Error('something else'))).toBe(false);
  });

  it("a unique violation on a table is told from another table's and from other errors", () => {
    const onPlants = Object.assign(serverError('23505'), { table: 'plants' });
    expect(isPostgresUniqueViolationOn(fromQuery(onPlants), 'plants')).toBe(true);
    expect(isPostgresUniqueViolationOn(onPlants, 'plants')).toBe(true);
    expect(isPostgresUniqueViolationOn(fromQuery(onPlants), 'webhook_deliveries')).toBe(false);
    const foreignKey = Object.assign(serverError('23503'), { table: 'plants' });
    expect(isPostgresUniqueViolationOn(fromQuery(foreignKey), 'plants')).toBe(false);
  });

  it('an errno that looks like a SQLSTATE is no answer from the server', () => {
    // EPIPE has five capital letters; only an ErrorResponse has a severity.
    expect(nothingRan(socketError('EPIPE'))).toBe(false);
    expect(poisonsConnection(socketError('EPIPE'))).toBe(true);
  });

  describe('permanent failures, named for the operator', () => {
    it.each([
      ['3D000', 'database "nope" does not exist', /does not exist/],
      ['28P01', 'password authentication failed for user "app"', /refused the login/],
      ['28000', 'no pg_hba.conf entry for host', /refused the login/],
    ])('%s from PostgreSQL', (code, message, expected) => {
      expect(permanentFailure(serverError(code, message))).toMatch(expected);
      expect(permanentFailure(serverError(code, message))).toContain(message);
    });

    it.each([
      ['no such database: nope', /does not exist/],
      ['database "nope" does not exist', /does not exist/],
      ['password authentication failed', /refused the login/],
      ['no such user: app', /refused the login/],
    ])('PgBouncer says "%s" as 08P01', (message, expected) => {
      expect(permanentFailure(serverError('08P01', message))).toMatch(expected);
    });

    it('a URL that cannot be read', () => {
      expect(permanentFailure(new MalformedDatabaseUrlError('no host'))).toMatch(/no host/);
    });

    it('anything else is not permanent, and after start-up still a 503', () => {
      expect(permanentFailure(serverError('08P01', 'server conn crashed?'))).toBeUndefined();
      expect(permanentFailure(serverError('57P03'))).toBeUndefined();
      expect(permanentFailure(socketError('ECONNREFUSED'))).toBeUndefined();
      expect(isDatabaseUnavailable(serverError('3D000'))).toBe(true);
      expect(isDatabaseUnavailable(serverError('28P01'))).toBe(true);
    });
  });
});
