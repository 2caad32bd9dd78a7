import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import type { DatabaseKind } from '../../src/database/data-source-options.js';

export interface TestDatabase {
  kind: DatabaseKind;
  url: string;
  drop(): Promise<void>;
}

/** The databases every e2e suite runs on: SQLite always, PostgreSQL when reachable (always in CI). */
export function databaseKinds(): DatabaseKind[] {
  return inject('postgresAdminUrl') ? ['sqlite', 'postgres'] : ['sqlite'];
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('postgresAdminUrl')! });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A new, empty database of its own for one suite: a temporary SQLite file or a fresh PostgreSQL database. */
export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'plant-store-'));
    return {
      kind,
      url: `sqlite:${join(dir, 'plants.sqlite')}`,
      drop: () => rm(dir, { recursive: true, force: true }),
    };
  }
  const name = `plant_store_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name} ENCODING 'UTF8' TEMPLATE template0`);
  const url = new URL(inject('postgresAdminUrl')!);
  url.pathname = `/${name}`;
  return {
    kind,
    url: url.toString(),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
