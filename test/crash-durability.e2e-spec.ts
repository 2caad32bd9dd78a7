import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killHard, type ServiceProcess, startService } from './support/service-process.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';
import { startApp } from './support/test-app.js';

const TOKEN = 'pst_crash-test-token-0123456789abcdefghijklmn';
const CLIENTS = 16;
/** The service is killed when this many creates of a round have been answered 200. */
const ACKS_BEFORE_KILL = 120;
const ROUNDS = 2;

interface RoundResult {
  acknowledged: Set<string>;
  inDoubt: Set<string>;
  inFlightAtKill: number;
}

/**
 * 16 clients create plants as fast as they can (each its own keep-alive
 * connection, one request at a time); once enough creates were answered 200,
 * the service is killed with SIGKILL while the others are still in flight.
 * A create answered 200 is acknowledged; one that got no answer is in doubt
 * (it may or may not have been stored).
 */
async function loadAndKill(service: ServiceProcess, round: number): Promise<RoundResult> {
  const acknowledged = new Set<string>();
  const inDoubt = new Set<string>();
  let inFlight = 0;
  let inFlightAtKill = -1;
  let killed = false;
  const client = async (index: number) => {
    for (let seq = 0; !killed; seq++) {
      const name = `r${round}-c${index}-${seq}`;
      const id = (BigInt(index - CLIENTS / 2) << 59n) + BigInt(round * 1_000_000 + seq);
      inFlight += 1;
      try {
        const response = await fetch(`${service.url}/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: `{"id":${id},"name":"${name}"}`,
        });
        const body = await response.text();
        if (response.status !== 200) throw new Error(`create answered ${response.status} ${body}`);
        expect(JSON.parse(body)).toEqual({ name });
        acknowledged.add(name);
        if (acknowledged.size >= ACKS_BEFORE_KILL && !killed) {
          killed = true;
          inFlightAtKill = inFlight - 1;
          service.child.kill('SIGKILL');
        }
      } catch (error) {
        if (!killed) throw error;
        inDoubt.add(name);
      } finally {
        inFlight -= 1;
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, index) => client(index)));
  await killHard(service);
  return { acknowledged, inDoubt, inFlightAtKill };
}

describe.each(databaseKinds())('crash durability of the built service on %s', (kind) => {
  let database: TestDatabase;
  let cwd: string;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    cwd = await mkdtemp(join(tmpdir(), 'plant-store-crash-'));
  });
  afterAll(async () => {
    await database.drop();
    await rm(cwd, { recursive: true, force: true });
  });

  it(`keeps every create answered 200 by ${CLIENTS} concurrent clients through kill -9 mid-load, ${ROUNDS} times`, async () => {
    const env = { NODE_ENV: 'production', DATABASE_URL: database.url, BOOTSTRAP_TOKEN: TOKEN };
    const acknowledged = new Set<string>();
    const attempted = new Set<string>();
    let inDoubt = 0;
    let inFlightAtKill = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const result = await loadAndKill(await startService(cwd, env), round);
      expect(result.acknowledged.size).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL);
      // The kill landed mid-load: other clients were waiting for answers.
      expect(result.inFlightAtKill).toBeGreaterThan(0);
      for (const name of result.acknowledged) acknowledged.add(name);
      for (const name of [...result.acknowledged, ...result.inDoubt]) attempted.add(name);
      inDoubt += result.inDoubt.size;
      inFlightAtKill += result.inFlightAtKill;
    }

    const restarted = await startService(cwd, env);
    try {
      const response = await fetch(`${restarted.url}/plants`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(response.status).toBe(200);
      const listed = new Set(
        ((await response.json()) as Array<{ name: string }>).map((p) => p.name),
      );
      const lost = [...acknowledged].filter((name) => !listed.has(name));
      const phantom = [...listed].filter((name) => !attempted.has(name));
      expect(lost, 'acknowledged creates missing after kill -9 and restart').toEqual([]);
      expect(phantom, 'plants nobody created').toEqual([]);
      const inDoubtKept = listed.size - acknowledged.size;
      console.info(
        `crash durability on ${kind}: ${ROUNDS} kills with ${inFlightAtKill} requests in flight, ` +
          `${acknowledged.size} acknowledged creates, 0 lost; ${inDoubt} in doubt, ${inDoubtKept} of them stored`,
      );
    } finally {
      await killHard(restarted);
    }
  }, 120_000);
});

describe('the SQLite durability setting', () => {
  it('is WAL with synchronous = FULL on the connection the service uses', async () => {
    const database = await createTestDatabase('sqlite');
    const app = await startApp(database);
    try {
      const dataSource = app.app.get(DataSource);
      expect(await dataSource.query('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
      // 2 = FULL: the WAL is fsync'ed at every commit, before the answer.
      expect(await dataSource.query('PRAGMA synchronous')).toEqual([{ synchronous: 2 }]);
    } finally {
      await app.close();
      await database.drop();
    }
  });
});
