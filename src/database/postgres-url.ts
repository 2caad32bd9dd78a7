/** DATABASE_URL cannot be read as a PostgreSQL URL; the message says why, never the password. */
export class MalformedDatabaseUrlError extends Error {
  constructor(problem: string) {
    super(`DATABASE_URL is not a usable PostgreSQL URL: ${problem}`);
    this.name = 'MalformedDatabaseUrlError';
  }
}

export interface PostgresHost {
  host: string;
  port: number;
  /** DATABASE_URL with this host alone: what node-postgres, which knows no host lists, is given. */
  url: string;
}

/**
 * libpq's `target_session_attrs`, of the values a service that writes can
 * use: `read-write` and `primary` take the first host that accepts writes,
 * `any` (libpq's default) the first that answers. The service checks every
 * new connection for writes whichever is given, since it cannot work on a
 * standby (failover-pool.ts), so the three act alike; the values meant for
 * reading from standbys are refused.
 */
const TARGET_SESSION_ATTRS: readonly string[] = ['any', 'read-write', 'primary'];

const SCHEME = /^(postgres(?:ql)?:\/\/)/;

function parseHost(spec: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d*))?$/.exec(spec);
  if (!match) throw new MalformedDatabaseUrlError(`cannot read the host "${spec}"`);
  const port = match[2] ? Number(match[2]) : 5432;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new MalformedDatabaseUrlError(`the port of "${spec}" is not from 1 to 65535`);
  }
  return { host: match[1], port };
}

/**
 * Reads a PostgreSQL URL in libpq's form, which psql, libpq and JDBC accept,
 * several hosts included: `postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write`.
 * A host without a port has 5432; an IPv6 address is written in brackets.
 * Each host's URL keeps the user, password, database and the other query
 * parameters (sslmode, …), which node-postgres reads as it always does. The
 * hosts come in the URL's order: the order in which they are tried.
 */
export function parsePostgresUrl(url: string): { hosts: PostgresHost[] } {
  const scheme = SCHEME.exec(url)?.[1];
  if (!scheme)
    throw new MalformedDatabaseUrlError('it does not start with postgres:// or postgresql://');
  const rest = url.slice(scheme.length);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const tail = authorityEnd < 0 ? '' : rest.slice(authorityEnd);
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : authority.slice(0, at + 1);
  const hostList = authority.slice(at + 1);
  if (hostList === '') throw new MalformedDatabaseUrlError('it names no host');

  const queryAt = tail.indexOf('?');
  const path = queryAt < 0 ? tail : tail.slice(0, queryAt);
  const query = new URLSearchParams(queryAt < 0 ? '' : tail.slice(queryAt + 1));
  const attrs = query.get('target_session_attrs') ?? 'any';
  if (!TARGET_SESSION_ATTRS.includes(attrs)) {
    throw new MalformedDatabaseUrlError(
      `target_session_attrs=${attrs} is not supported: the service writes, so use read-write (or primary, or any)`,
    );
  }
  query.delete('target_session_attrs');
  const search = query.size > 0 ? `?${query.toString()}` : '';

  const hosts = hostList.split(',').map((spec) => {
    const { host, port } = parseHost(spec);
    const single = `${scheme}${userinfo}${host}:${port}${path}${search}`;
    try {
      new URL(single);
    } catch {
      throw new MalformedDatabaseUrlError(`cannot read it as a URL with the host "${spec}"`);
    }
    return { host, port, url: single };
  });
  return { hosts };
}
