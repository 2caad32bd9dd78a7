import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually.js';
import { killHard, type ServiceProcess, startService } from './support/service-process.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { startTestIssuer, type TestIssuer } from './support/test-issuer.js';

describe.each(databaseKinds())(
  'JWT access tokens in the logs of the built service on %s',
  (kind) => {
    let database: TestDatabase;
    let cwd: string;
    let issuer: TestIssuer;
    let service: ServiceProcess;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      cwd = await mkdtemp(join(tmpdir(), 'plant-store-jwt-logs-'));
      issuer = await startTestIssuer('plant-store');
      service = await startService(cwd, {
        NODE_ENV: 'production',
        DATABASE_URL: database.url,
        LOG_LEVEL: 'debug',
        AUTH_JWT_ISSUER: issuer.url,
        AUTH_JWT_AUDIENCE: 'plant-store',
        AUTH_JWT_JWKS_COOLDOWN_MS: '0',
      });
    });
    afterAll(async () => {
      if (service) await killHard(service);
      await issuer?.close();
      await database?.drop();
      await rm(cwd, { recursive: true, force: true });
    });

    it('never writes a token, valid or not, to the log or an error body, the 503s included', async () => {
      const now = Math.floor(Date.now() / 1000);
      const tokens = [
        await issuer.sign({ sub: 'logged' }),
        await issuer.sign({ exp: now - 600 }),
        await issuer.sign({ aud: 'elsewhere' }),
        await issuer.sign({}, { kid: 'unknown-key' }),
      ];
      const statuses: number[] = [];
      const bodies: string[] = [];
      const call = async (token: string) => {
        const response = await fetch(`${service.url}/plants`, {
          headers: { authorization: `Bearer ${token}` },
        });
        statuses.push(response.status);
        bodies.push(await response.text());
      };
      for (const token of tokens) await call(token);
      issuer.setDown(true);
      await issuer.rotate();
      const duringOutage = await issuer.sign({ sub: 'outage' });
      tokens.push(duringOutage);
      await call(duringOutage);
      issuer.setDown(false);
      expect(statuses).toEqual([200, 401, 401, 401, 503]);

      await eventually(
        () => /"statusCode":503/.test(service.output()),
        'the log line of the 503',
        5000,
      );
      const output = service.output();
      expect(output).toMatch(/"statusCode":503/);
      for (const token of tokens) {
        for (const part of token.split('.')) {
          expect(output).not.toContain(part);
          for (const body of bodies) expect(body).not.toContain(part);
        }
      }
    }, 60_000);
  },
);
