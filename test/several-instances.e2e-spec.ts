import { migrations } from '../src/database/migrations/index.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATION_LOCK_KEY } from '../src/database/run-migrations.js';
import { eventually } from './support/eventually.js';
import {
  killHard,
  type ServiceProcess,
  startService,
  tokenCli,
} from './support/service-process.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';

const create = (url: string, token: string, id: number, name: string) =>
  fetch(`${url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id, name }),
  });

/**
 * A create as a client that honours 503 makes it. 160 racing creates on a
 * machine busy with the rest of the suite can wait longer than
 * DB_CONNECT_TIMEOUT_MS for a pooled connection, or find the server out of
 * connections; the service then answers 503 and has written nothing. Any
 * other answer is returned as it is.
 */
async function createRetrying(url: string, token: string, id: number, name: string) {
  for (let attempt = 1; ; attempt++) {
    const response = await create(url, token, id, name);
    if (response.status !== 503 || attempt === 5) return response;
    await response.text();
    await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
  }
}

const list = (url: string, token: string) =>
  fetch(`${url}/plants`, { headers: { authorization: `Bearer ${token}` } });

describe.skipIf(!databaseKinds().includes('postgres'))(
  'two service processes on one PostgreSQL database (needs PostgreSQL)',
  () => {
    const BOOTSTRAP = 'pst_two-instances-token-0123456789abcdefghijk';
    let database: TestDatabase;
    let dirs: string[] = [];
    let services: ServiceProcess[] = [];
    let env: Record<string, string>;

    let waitedForTheLock = 0;

    /**
     * Two processes never boot in step on a busy machine. To make them start
     * "together" where it matters, the test holds the migration lock until both
     * are waiting for it, then lets go: they race for it from the same instant.
     */
    async function startTogether(
      startEnv: Record<string, string>,
    ): Promise<{ started: ServiceProcess[]; waiting: number }> {
      const holder = new pg.Client({ connectionString: database.directUrl });
      await holder.connect();
      try {
        // The service's lock is transaction-scoped: held until this transaction ends.
        await holder.query('BEGIN');
        await holder.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
        const starting = dirs.map((dir) => startService(dir, startEnv));
        // Awaited below; a start that fails before then must not be an unhandled rejection.
        for (const start of starting) void start.catch(() => undefined);
        let waiting = 0;
        await eventually(
          async () => {
            const { rows } = await holder.query<{ waiting: string }>(
              `SELECT count(*) AS waiting FROM pg_locks
               WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`,
              [MIGRATION_LOCK_KEY],
            );
            waiting = Number(rows[0].waiting);
            return waiting >= 2;
          },
          () => `${waiting} of 2 services waiting for the migration lock`,
          60_000,
          100,
        ).catch(() => undefined); // the test checks that both were
        await holder.query('COMMIT');
        const results = await Promise.allSettled(starting);
        const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        const failed = results.find((r) => r.status === 'rejected');
        if (failed) {
          // Do not leave the one that did start running after the suite.
          for (const service of started) await killHard(service);
          throw failed.reason;
        }
        return { started, waiting };
      } finally {
        await holder.end();
      }
    }

    beforeAll(async () => {
      database = await createTestDatabase('postgres');
      dirs = await Promise.all([0, 1].map(() => mkdtemp(join(tmpdir(), 'plant-store-two-'))));
      env = {
        NODE_ENV: 'production',
        DATABASE_URL: database.url,
        BOOTSTRAP_TOKEN: BOOTSTRAP,
        // The race sends 80 requests of one owner to each instance at once, past the
        // default bound on an owner's requests in flight: the race is under test here.
        FAIR_SHARE_MAX_IN_FLIGHT: '1000',
      };
      const { started, waiting } = await startTogether(env);
      services = started;
      waitedForTheLock = waiting;
    });

    afterAll(async () => {
      for (const service of services) await killHard(service);
      await database?.drop();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    });

    it('both start on an empty database at the same moment: the migration runs once, and neither fails', async () => {
      const client = new pg.Client({ connectionString: database.directUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ name: string }>('SELECT name FROM migrations');
        expect(rows.map((row) => row.name)).toEqual(migrations.map((m) => m.name));
      } finally {
        await client.end();
      }
      // Both were held at the lock, so both really raced for the migration.
      expect(waitedForTheLock).toBe(2);
      for (const service of services) {
        expect(service.output()).not.toMatch(/error|already exists/i);
        expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
      }
    });

    it('of racing creates of one id spread across both, exactly one is a 200; exact replays are all 200s', async () => {
      const ids = 20;
      const racers = 8;
      const outcomes = await Promise.all(
        Array.from({ length: ids }, async (_, id) => {
          const responses = await Promise.all(
            Array.from({ length: racers }, (_, racer) =>
              createRetrying(services[racer % 2].url, BOOTSTRAP, id, `id ${id} racer ${racer}`),
            ),
          );
          const statuses = responses.map((response) => response.status);
          const winner = responses.findIndex((response) => response.status === 200);
          // Any other answer is a failure; its body says which.
          const others = await Promise.all(
            responses
              .filter((response) => response.status !== 200 && response.status !== 409)
              .map(async (response) => `${response.status} ${await response.text()}`),
          );
          return { statuses, others, winnerName: `id ${id} racer ${winner}` };
        }),
      );
      for (const { statuses, others } of outcomes) {
        expect(others).toEqual([]);
        expect(statuses.filter((status) => status === 200)).toHaveLength(1);
        expect(statuses.filter((status) => status === 409)).toHaveLength(racers - 1);
      }
      const replays = await Promise.all(
        Array.from({ length: racers }, (_, racer) =>
          createRetrying(services[racer % 2].url, BOOTSTRAP, 1000, 'the same plant'),
        ),
      );
      expect(replays.map((response) => response.status)).toEqual(Array(racers).fill(200));
      for (const service of services) {
        const listed = (await (await list(service.url, BOOTSTRAP)).json()) as Array<{
          name: string;
        }>;
        expect(listed.map((plant) => plant.name)).toEqual([
          ...outcomes.map((outcome) => outcome.winnerName),
          'the same plant',
        ]);
      }
    });

    it('a token revoked through the command line is refused by both on the next request', async () => {
      const cliEnv = { NODE_ENV: 'production', DATABASE_URL: database.url };
      const created = await tokenCli(['create', '--owner', 'revokee'], cliEnv);
      expect(created.code, created.stderr).toBe(0);
      const token = created.stdout.trim();
      for (const service of services) expect((await list(service.url, token)).status).toBe(200);

      const listed = await tokenCli(['list'], cliEnv);
      const id = listed.stdout
        .split('\n')
        .find((line) => line.includes('\trevokee\t'))!
        .split('\t')[0];
      const revoked = await tokenCli(['revoke', id], cliEnv);
      expect(revoked.code, revoked.stderr).toBe(0);

      for (const service of services) {
        const refused = await list(service.url, token);
        expect(refused.status).toBe(401);
        expect(refused.headers.get('www-authenticate')).toBe(
          'Bearer realm="plants", error="invalid_token"',
        );
      }
    });
  },
);
