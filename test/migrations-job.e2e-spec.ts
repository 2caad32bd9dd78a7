import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/database/migrations/index.js';
import { runSql } from './support/seed.js';
import { killHard, runServiceToExit, startService } from './support/service-process.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from './support/test-database.js';

/** Every line of a production process's output is a JSON log line. */
function expectJsonLines(output: string): Array<{ msg?: string; level?: number }> {
  const lines = output.trim().split('\n');
  return lines.map((line) => {
    expect(() => JSON.parse(line), `not a JSON line: ${line}`).not.toThrow();
    return JSON.parse(line) as { msg?: string; level?: number };
  });
}

async function startsAndAnswers(cwd: string, env: Record<string, string>): Promise<void> {
  const service = await startService(cwd, env);
  try {
    expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
  } finally {
    await killHard(service);
  }
}

describe.each(databaseKinds())('migrations as a job, on %s', (kind) => {
  let database: TestDatabase;
  let cwd: string;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    cwd = await mkdtemp(join(tmpdir(), 'plant-store-migrate-'));
  });
  afterAll(async () => {
    await database.drop();
    await rm(cwd, { recursive: true, force: true });
  });

  it('with DB_MIGRATE_ON_START=false refuses a schema that is behind, naming the migration; the job brings it up; a schema ahead stops no instance', async () => {
    const env = {
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      DB_MIGRATE_ON_START: 'false',
    };
    const refused = await runServiceToExit(cwd, env);
    expect(refused.code).toBe(1);
    // JSON from the first line to the last, the reason included.
    const lines = expectJsonLines(refused.output);
    const reason = lines.at(-1)!;
    expect(reason.level).toBeGreaterThanOrEqual(50);
    expect(reason.msg).toContain(`pending migration ${migrations.map((m) => m.name).join(', ')}`);
    expect(reason.msg).toContain('node dist/migrate.main.js');

    const job = await runServiceToExit(cwd, env, 'dist/migrate.main.js');
    expect(job.code).toBe(0);
    expect(expectJsonLines(job.output).at(-1)!.msg).toBe('the schema is up to date');
    // Run again: nothing to do.
    expect((await runServiceToExit(cwd, env, 'dist/migrate.main.js')).code).toBe(0);
    await startsAndAnswers(cwd, env);

    // A newer version's job ran first (rolling upgrade): this version still starts,
    // whether it migrates at start-up or not.
    const future = ['9999999999999', 'FromANewerVersion9999999999999'];
    await runSql(database, {
      sqlite: ['INSERT INTO migrations (timestamp, name) VALUES (?, ?)', future],
      postgres: ['INSERT INTO migrations (timestamp, name) VALUES ($1, $2)', future],
    });
    await startsAndAnswers(cwd, env);
    await startsAndAnswers(cwd, { ...env, DB_MIGRATE_ON_START: 'true' });
  });
});
