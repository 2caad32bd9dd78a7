import { describe, expect, it } from 'vitest';
import { parsePostgresUrl } from './postgres-url.js';

describe('parsePostgresUrl', () => {
  it('reads one host as node-postgres would', () => {
    const { hosts } = parsePostgresUrl('postgres://app:pw@db:5433/plants');
    expect(hosts).toEqual([{ host: 'db', port: 5433, url: 'postgres://app:pw@db:5433/plants' }]);
  });

  it("reads libpq's host list, each host with its own URL, in order", () => {
    const { hosts } = parsePostgresUrl(
      'postgresql://app:p%40ss@h1:5432,h2,[::1]:6432/plants?target_session_attrs=read-write&sslmode=require',
    );
    expect(hosts.map(({ host, port }) => `${host} ${port}`)).toEqual([
      'h1 5432',
      'h2 5432',
      '[::1] 6432',
    ]);
    expect(hosts[1].url).toBe('postgresql://app:p%40ss@h2:5432/plants?sslmode=require');
    expect(new URL(hosts[2].url).hostname).toBe('[::1]');
  });

  it('takes read-write, primary and any, which act alike here, and drops the parameter', () => {
    for (const attrs of ['read-write', 'primary', 'any']) {
      const { hosts } = parsePostgresUrl(`postgres://a@h1,h2/db?target_session_attrs=${attrs}`);
      expect(hosts.map((host) => host.url)).toEqual([
        'postgres://a@h1:5432/db',
        'postgres://a@h2:5432/db',
      ]);
    }
  });

  it.each([
    ['postgres://a@h1,h2/db?target_session_attrs=standby', /target_session_attrs=standby/],
    ['postgres://a@h1,h2/db?target_session_attrs=read-only', /read-write/],
    ['postgres://a@/db', /no host/],
    ['postgres://a@h1:99999/db', /port/],
    ['postgres://a@h1:x/db', /host "h1:x"/],
    ['postgres://a@h1,,h2/db', /host ""/],
    ['mysql://a@h1/db', /postgres:\/\//],
  ])('refuses %s, saying why', (url, reason) => {
    expect(() => parsePostgresUrl(url)).toThrow(reason);
  });

  it('never repeats the password in its refusal', () => {
    expect(() => parsePostgresUrl('postgres://app:secret@h1:x/db')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('secret') }),
    );
  });
});
