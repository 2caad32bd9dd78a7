import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { Database } from './better-sqlite3.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/** Direct SQL on one database: seeding in big transactions, never over HTTP. */
export interface Seeder {
  url: string;
  /** Stores the SHA-256 of the token for the owner, as the token CLI would. */
  token(owner: string): Promise<string>;
  /** Inserts ids from..from+count-1 for the owner, in one statement; even ids get a tag. */
  plants(owner: string, from: bigint, count: number): Promise<void>;
  /** The query plan of the list query (limit 20), for the report. */
  explainList(owner: string): Promise<string>;
  analyze(): Promise<void>;
  close(): Promise<void>;
}

const hash = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');
const newToken = () => `pst_${randomBytes(32).toString('base64url')}`;

function sqliteSeeder(file: string): Seeder {
  let db: BetterSqlite3.Database | undefined;
  // Opened lazily: the tables exist only once the server has migrated.
  const open = () => {
    db ??= new Database(file, { timeout: 30_000 });
    return db;
  };
  return {
    url: `sqlite:${file}`,
    token: async (owner) => {
      const token = newToken();
      open()
        .prepare(
          'INSERT INTO api_tokens (id, token_hash, owner, label, created_at) VALUES (?, ?, ?, ?, ?)',
        )
        .run(randomUUID(), hash(token), owner, 'bench', new Date().toISOString());
      return token;
    },
    plants: async (owner, from, count) => {
      open()
        .prepare(
          `WITH RECURSIVE g(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM g WHERE n < ?)
           INSERT INTO plants (owner, id, name, tag)
           SELECT ?, n, 'plant ' || n, CASE WHEN n % 2 = 0 THEN 'bench' END FROM g`,
        )
        .run(from, from + BigInt(count) - 1n, owner);
    },
    explainList: async (owner) =>
      open()
        .prepare(
          'EXPLAIN QUERY PLAN SELECT CAST(p.id AS TEXT) AS id, p.name, p.tag FROM plants p WHERE p.owner = ? ORDER BY p.id LIMIT 20',
        )
        .all(owner)
        .map((row) => (row as { detail: string }).detail)
        .join('; '),
    analyze: async () => undefined,
    close: async () => void db?.close(),
  };
}

function postgresSeeder(url: string): Seeder {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  // pool.end() resolves before its idle connections have closed, and drop() then drops the
  // database WITH (FORCE): PostgreSQL ends such a connection (57P01) and pg re-emits that on the
  // pool, where an 'error' event without a listener ended the whole bench (seen in CI).
  // Queries still reject as before; only an idle connection's end is let go here.
  pool.on('error', () => undefined);
  return {
    url,
    token: async (owner) => {
      const token = newToken();
      await pool.query(
        'INSERT INTO api_tokens (id, token_hash, owner, label, created_at) VALUES ($1, $2, $3, $4, $5)',
        [randomUUID(), hash(token), owner, 'bench', new Date().toISOString()],
      );
      return token;
    },
    plants: async (owner, from, count) => {
      await pool.query(
        `INSERT INTO plants (owner, id, name, tag)
         SELECT $1, n, 'plant ' || n, CASE WHEN n % 2 = 0 THEN 'bench' END
         FROM generate_series($2::bigint, $3::bigint) AS n`,
        [owner, from.toString(), (from + BigInt(count) - 1n).toString()],
      );
    },
    explainList: async (owner) =>
      (
        await pool.query<{ 'QUERY PLAN': string }>(
          'EXPLAIN SELECT CAST(p.id AS TEXT) AS id, p.name, p.tag FROM plants p WHERE p.owner = $1 ORDER BY p.id LIMIT 20',
          [owner],
        )
      ).rows
        .map((row) => row['QUERY PLAN'].trim())
        .join('; '),
    analyze: async () => void (await pool.query('ANALYZE plants')),
    close: () => pool.end(),
  };
}

export interface BenchDatabases {
  /** One empty database per server, by the server's name. */
  of: Record<string, Seeder>;
  drop(): Promise<void>;
}

async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** An empty database of one kind for each of `servers`. */
export async function createDatabases(
  kind: DatabaseKind,
  postgresAdminUrl: string,
  servers: readonly string[],
): Promise<BenchDatabases> {
  const of: Record<string, Seeder> = {};
  const closeAll = async () => {
    for (const seeder of Object.values(of)) await seeder.close();
  };
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-'));
    for (const server of servers) of[server] = sqliteSeeder(join(dir, `${server}.sqlite`));
    return {
      of,
      drop: async () => {
        await closeAll();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const prefix = `bench_${randomBytes(5).toString('hex')}`;
  const names: string[] = [];
  for (const server of servers) {
    const name = `${prefix}_${server.replace(/[^a-z]/g, '_')}`;
    await adminQuery(
      postgresAdminUrl,
      `CREATE DATABASE ${name} ENCODING 'UTF8' TEMPLATE template0`,
    );
    names.push(name);
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${name}`;
    of[server] = postgresSeeder(url.toString());
  }
  return {
    of,
    drop: async () => {
      await closeAll();
      for (const name of names) {
        await adminQuery(postgresAdminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    },
  };
}
