import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTokenCli } from '../src/auth/token-cli.js';
import { eventually } from './support/eventually.js';
import { killHard, type ServiceProcess, startService } from './support/service-process.js';
import { runSql } from './support/seed.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';

const BOOTSTRAP = `pst_${randomBytes(32).toString('base64url')}`;

/** Runs one statement on the service's database behind its back, to break it on purpose. */
const sqlBehindTheService = (database: TestDatabase, statement: string) =>
  runSql(database, { sqlite: [statement], postgres: [statement] });

describe.each(databaseKinds())(
  'secrets in the logs and error bodies of the built service on %s',
  (kind) => {
    let database: TestDatabase;
    let cwd: string;
    let service: ServiceProcess;
    const env = () => ({ NODE_ENV: 'production', DATABASE_URL: database.url });

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      cwd = await mkdtemp(join(tmpdir(), 'plant-store-logs-'));
      service = await startService(cwd, { ...env(), BOOTSTRAP_TOKEN: BOOTSTRAP });
    });
    afterAll(async () => {
      if (service) await killHard(service);
      await database?.drop();
      await rm(cwd, { recursive: true, force: true });
    });

    it('no token or Authorization header appears in the output, with valid, unknown and revoked tokens, tokens in URLs, and 500s', async () => {
      const out: string[] = [];
      const io = { out: (line: string) => out.push(line), err: () => undefined };
      expect(await runTokenCli(['create', '--owner', 'leaker'], io, env())).toBe(0);
      expect(await runTokenCli(['create', '--owner', 'leaker'], io, env())).toBe(0);
      const [valid, revoked] = out.splice(0);
      await runTokenCli(['list'], io, env());
      const revokedId = out.filter((line) => line.includes('\tleaker\t'))[1].split('\t')[0];
      expect(await runTokenCli(['revoke', revokedId], io, env())).toBe(0);
      const unknown = `pst_${randomBytes(32).toString('base64url')}`;
      const basic = Buffer.from(`leaker:${valid}`).toString('base64');
      const secrets = [BOOTSTRAP, valid, revoked, unknown, basic];

      const bodies: string[] = [];
      const statuses: number[] = [];
      const call = async (path: string, authorization?: string, method = 'GET', body?: string) => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (authorization !== undefined) headers.authorization = authorization;
        const response = await fetch(service.url + path, { method, headers, body });
        bodies.push(await response.text());
        statuses.push(response.status);
        return response.status;
      };
      const plant = (id: number) => JSON.stringify({ id, name: `p${id}` });

      // Valid, unknown, revoked and malformed credentials.
      expect(await call('/plants', `Bearer ${valid}`, 'POST', plant(1))).toBe(200);
      expect(await call('/plants', `Bearer ${valid}`)).toBe(200);
      expect(await call('/plants/1', `Bearer ${valid}`, 'DELETE')).toBe(204);
      expect(await call('/plants', `Bearer ${unknown}`)).toBe(401);
      expect(await call('/plants', `Bearer ${revoked}`, 'POST', plant(2))).toBe(401);
      expect(await call('/plants', `Basic ${basic}`)).toBe(401);
      expect(await call('/plants', `Bearer ${valid} ${valid}`)).toBe(401);
      expect(await call('/plants', `Bearer ${valid}`, 'POST', `{"id":1,"name":"${valid}`)).toBe(
        400,
      );
      // Tokens in URLs and bodies, which the service never reads.
      expect(await call(`/plants?access_token=${valid}`)).toBe(401);
      expect(await call(`/plants?access_token=${valid}`, `Bearer ${valid}`)).toBe(400);
      expect(await call(`/nowhere?access_token=${valid}`, `Bearer ${valid}`)).toBe(404);
      expect(await call(`/%E0%A4%A?access_token=${valid}`)).toBe(400);
      expect(await call(`/plants/${'9'.repeat(200)}?access_token=${valid}`, 'x', 'DELETE')).toBe(
        414,
      );
      // Under other names, in other cases, after a `;`, and token-shaped anywhere in the URL.
      const apiKey = randomBytes(24).toString('base64url');
      const jwt = [
        'eyJhbGciOiJFUzI1NiJ9',
        Buffer.from(JSON.stringify({ sub: 'leaker' })).toString('base64url'),
        randomBytes(64).toString('base64url'),
      ].join('.');
      secrets.push(apiKey, jwt);
      for (const path of [
        `/plants?ACCESS_TOKEN=${valid}`,
        `/plants?Token=${apiKey}`,
        `/plants?api_key=${apiKey}`,
        `/plants?limit=1;access_token=${apiKey}`,
        `/plants?id_token=${jwt}`,
        `/plants?q=${valid}`,
      ]) {
        expect(await call(path)).toBe(401);
      }
      expect(await call(`/plants/${jwt}`, undefined, 'DELETE')).toBe(414);
      expect(await call(`/plants/${valid}`, undefined, 'DELETE')).toBe(401);
      const tokenInBody = JSON.stringify({ id: 3, name: 'x', access_token: valid });
      expect(await call('/plants', undefined, 'POST', tokenInBody)).toBe(401);
      // Percent-encoded in part: the whole token is redacted, not just its plain part.
      const dashed = `pst_abc-${randomBytes(32).toString('base64url')}`;
      const rest = dashed.slice(8);
      expect(await call(`/nope/pst%5F${valid.slice(4)}`)).toBe(404);
      expect(await call(`/nope/pst%255f${unknown.slice(4)}`)).toBe(404);
      expect(await call(`/plants?x=%70st_${valid.slice(4)}`)).toBe(401);
      expect(await call(`/nope/pst_abc%2D${rest}`)).toBe(404);
      expect(await call(`/nope/pst_abc%2d${rest}?access%5Ftoken=${rest}`)).toBe(404);
      // Server faults while a token is in flight: in the plant query, and in the token lookup itself.
      await sqlBehindTheService(database, 'ALTER TABLE plants RENAME TO plants_away');
      try {
        expect(await call('/plants', `Bearer ${valid}`)).toBe(500);
        expect(await call('/plants', `Bearer ${valid}`, 'POST', plant(4))).toBe(500);
      } finally {
        await sqlBehindTheService(database, 'ALTER TABLE plants_away RENAME TO plants');
      }
      await sqlBehindTheService(database, 'ALTER TABLE api_tokens RENAME TO api_tokens_away');
      try {
        for (const token of [valid, revoked, unknown]) {
          expect(await call(`/plants?access_token=${token}`, `Bearer ${token}`)).toBe(500);
        }
      } finally {
        await sqlBehindTheService(database, 'ALTER TABLE api_tokens_away RENAME TO api_tokens');
      }
      expect(await call('/plants', `Bearer ${valid}`)).toBe(200);

      // The capture works: the five 500s were logged, with their causes. The
      // child's log lines reach the pipe a little after its answers, so wait for them.
      const faultLines = () =>
        service
          .output()
          .split('\n')
          .filter((line) => / -> 500/.test(line));
      await eventually(
        () => faultLines().length >= 5,
        () => `${faultLines().length} of 5 lines of a 500 logged`,
        5000,
      );
      const output = service.output();
      expect(faultLines()).toHaveLength(5);
      expect(output).toMatch(/plants_away|no such table|does not exist/);
      for (const secret of [...secrets, `xxxx${rest}`]) {
        expect(output).not.toContain(secret);
        expect(output).not.toContain(secret.slice(4));
        for (const body of bodies) expect(body).not.toContain(secret.slice(4));
      }
      // Those requests were logged, redacted.
      expect(output).toContain('"url":"/nope/%5BREDACTED%5D"');
      expect(output).toContain('"url":"/plants?x=%5BREDACTED%5D"');
      // No header echoed either ("BearerStrategy" in a stack frame is fine), and no
      // ?access_token= value (the request log may name the parameter, redacted).
      expect(output).not.toMatch(/authorization"?\s*[:=]|bearer\s+\S/i);
      expect(output).not.toMatch(/access_token=(?!%5BREDACTED%5D)/);
      expect(statuses.filter((status) => status >= 400)).toHaveLength(statuses.length - 4);
    }, 60_000);

    it('cuts a long URL in the log line, and says so', async () => {
      const query = 'a=b&'.repeat(3840);
      const lineOf = (id: string) =>
        service
          .output()
          .split('\n')
          .find((line) => line.includes(`"id":"${id}"`));
      for (const [path, status] of [
        [`/health/live?${query}`, 200],
        [`/nowhere/${'x'.repeat(15_000)}`, 404],
        ['/health/live', 200],
      ] as const) {
        const id = `long-url-${randomBytes(6).toString('hex')}`;
        const response = await fetch(service.url + path, { headers: { 'x-request-id': id } });
        expect(response.status).toBe(status);
        await response.text();
        const line = await eventually(() => lineOf(id), `the log line of ${id}`, 5000);
        const url = JSON.parse(line).req.url as string;
        if (path.length > 2048) {
          expect(line.length).toBeLessThan(3000);
          expect(url).toBe(`${path.slice(0, 2048)}…[cut ${path.length - 2048} characters]`);
        } else {
          expect(url).toBe(path);
        }
      }
    });
  },
);
