import pg from 'pg';
import { Database } from '../support/better-sqlite3.js';

export interface PlantRow {
  name: string;
  tag: string | null;
}

/** A listed plant with its id as text (for the next link's cursor), as the service reads it. */
export interface ListedRow extends PlantRow {
  id: string;
}

/** The five queries of the hot path, written by hand for one database. */
export interface Store {
  ownerOf(tokenHash: string): Promise<string | undefined>;
  list(owner: string, limit: number): Promise<ListedRow[]>;
  /**
   * The plant and, in the same transaction, one pending delivery of `event` per
   * active webhook subscription of the owner: the service's outbox write.
   * false on a primary-key violation (the id is taken for this owner).
   */
  insert(
    owner: string,
    id: bigint,
    name: string,
    tag: string | null,
    event: string,
  ): Promise<boolean>;
  find(owner: string, id: bigint): Promise<PlantRow | undefined>;
  remove(owner: string, id: bigint): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The schema the service's migration creates (src/database/migrations), as
 * TypeORM writes it for each database, so that every server of the bench
 * queries the same tables (the conventional peer's migration runs these too).
 */
export const SCHEMA: Readonly<Record<'sqlite' | 'postgres', readonly string[]>> = {
  sqlite: [
    'CREATE TABLE IF NOT EXISTS "plants" ("owner" varchar(64) NOT NULL, "id" bigint NOT NULL, "name" varchar(255) NOT NULL, "tag" varchar(255), PRIMARY KEY ("owner", "id"))',
    'CREATE TABLE IF NOT EXISTS "api_tokens" ("id" varchar(36) PRIMARY KEY NOT NULL, "token_hash" varchar(64) NOT NULL, "owner" varchar(64) NOT NULL, "label" varchar(255), "created_at" varchar(32) NOT NULL, "revoked_at" varchar(32), CONSTRAINT "UQ_api_tokens_token_hash" UNIQUE ("token_hash"))',
    'CREATE TABLE IF NOT EXISTS "webhook_subscriptions" ("id" varchar(36) PRIMARY KEY NOT NULL, "owner" varchar(64) NOT NULL, "url" varchar(2048) NOT NULL, "description" varchar(255), "secret" varchar(64) NOT NULL, "created_at" bigint NOT NULL, "disabled_at" bigint)',
    'CREATE INDEX IF NOT EXISTS "webhook_subscriptions_owner" ON "webhook_subscriptions" ("owner")',
    'CREATE TABLE IF NOT EXISTS "webhook_deliveries" ("id" varchar(40) PRIMARY KEY NOT NULL, "subscription_id" varchar(36) NOT NULL, "payload" text NOT NULL, "state" varchar(16) NOT NULL, "attempts" integer NOT NULL DEFAULT (0), "next_attempt_at" bigint, "lease_owner" varchar(36), "lease_until" bigint, "last_status" integer, "last_error" varchar(300), "created_at" bigint NOT NULL, "trace_parent" varchar(55), FOREIGN KEY ("subscription_id") REFERENCES "webhook_subscriptions" ("id") ON DELETE CASCADE)',
    'CREATE INDEX IF NOT EXISTS "webhook_deliveries_due" ON "webhook_deliveries" ("state", "next_attempt_at")',
    'CREATE INDEX IF NOT EXISTS "webhook_deliveries_subscription" ON "webhook_deliveries" ("subscription_id", "created_at")',
  ],
  postgres: [
    'CREATE TABLE IF NOT EXISTS plants (owner character varying(64) NOT NULL, id bigint NOT NULL, name character varying(255) NOT NULL, tag character varying(255), PRIMARY KEY (owner, id))',
    'CREATE TABLE IF NOT EXISTS api_tokens (id character varying(36) PRIMARY KEY, token_hash character varying(64) NOT NULL UNIQUE, owner character varying(64) NOT NULL, label character varying(255), created_at character varying(32) NOT NULL, revoked_at character varying(32))',
    'CREATE TABLE IF NOT EXISTS webhook_subscriptions (id character varying(36) PRIMARY KEY, owner character varying(64) NOT NULL, url character varying(2048) NOT NULL, description character varying(255), secret character varying(64) NOT NULL, created_at bigint NOT NULL, disabled_at bigint)',
    'CREATE INDEX IF NOT EXISTS webhook_subscriptions_owner ON webhook_subscriptions (owner)',
    'CREATE TABLE IF NOT EXISTS webhook_deliveries (id character varying(40) PRIMARY KEY, subscription_id character varying(36) NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE, payload text NOT NULL, state character varying(16) NOT NULL, attempts integer NOT NULL DEFAULT 0, next_attempt_at bigint, lease_owner character varying(36), lease_until bigint, last_status integer, last_error character varying(300), created_at bigint NOT NULL, trace_parent character varying(55))',
    'CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at)',
    'CREATE INDEX IF NOT EXISTS webhook_deliveries_subscription ON webhook_deliveries (subscription_id, created_at)',
  ],
};

/**
 * The settings every server of the bench gives PostgreSQL's pool: the service's defaults
 * (DB_CONNECT_TIMEOUT_MS, and DB_STATEMENT_TIMEOUT_MS as pg's client-side query_timeout).
 * Like the service's, none is a startup parameter: PgBouncer in transaction mode refuses a
 * connection that sends statement_timeout ("unsupported startup parameter").
 */
export const POSTGRES_POOL = {
  connectionTimeoutMillis: 5000,
  query_timeout: 10_000,
} as const;

function sqliteStore(file: string, busyTimeoutMs: number): Store {
  const db = new Database(file, { timeout: busyTimeoutMs });
  // The service's settings: WAL, and every commit fsync'ed before the answer.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  for (const statement of SCHEMA.sqlite) db.exec(statement);
  const owner = db
    .prepare<[string], { owner: string }>(
      'SELECT owner FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL',
    )
    .pluck() as unknown as { get(hash: string): string | undefined };
  const list = db.prepare<[string, number], ListedRow>(
    'SELECT CAST(id AS TEXT) AS id, name, tag FROM plants WHERE owner = ? ORDER BY plants.id LIMIT ?',
  );
  const insert = db.prepare('INSERT INTO plants (owner, id, name, tag) VALUES (?, ?, ?, ?)');
  const insertEvents = db.prepare(
    `INSERT INTO webhook_deliveries (id, subscription_id, payload, state, attempts, next_attempt_at, created_at, trace_parent)
     SELECT 'msg_' || lower(hex(randomblob(16))), s.id, ?, 'pending', 0, ?, ?, NULL
     FROM webhook_subscriptions s WHERE s.owner = ? AND s.disabled_at IS NULL`,
  );
  // BEGIN IMMEDIATE, like the service: a writer takes the lock first.
  const insertWithEvents = db.transaction(
    (o: string, id: bigint, name: string, tag: string | null, event: string) => {
      insert.run(o, id, name, tag);
      const now = Date.now();
      insertEvents.run(event, now, now, o);
    },
  );
  const find = db.prepare<[string, bigint], PlantRow>(
    'SELECT name, tag FROM plants WHERE owner = ? AND id = ?',
  );
  const remove = db.prepare('DELETE FROM plants WHERE owner = ? AND id = ?');
  return {
    ownerOf: async (hash) => owner.get(hash),
    list: async (o, limit) => list.all(o, limit),
    insert: async (o, id, name, tag, event) => {
      try {
        insertWithEvents.immediate(o, id, name, tag, event);
        return true;
      } catch (error) {
        if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return false;
        throw error;
      }
    },
    find: async (o, id) => find.get(o, id),
    remove: async (o, id) => remove.run(o, id).changes > 0,
    close: async () => void db.close(),
  };
}

/**
 * Runs one PostgreSQL statement, named `name` when the runner prepares statements by name:
 * the driver's pool here, TypeORM's DataSource in bench/peers/floor.
 */
type PostgresQuery = <Row extends pg.QueryResultRow>(
  name: string,
  text: string,
  values: unknown[],
) => Promise<{ rows: Row[]; rowCount: number | null }>;

/**
 * A create on PostgreSQL, the plant and its events in one statement as the service writes them:
 * $1–$4 the plant (owner, id, name, tag), $5 the event's payload, $6 and $7 the time, in ms.
 */
export const POSTGRES_CREATE = `WITH p AS (INSERT INTO plants (owner, id, name, tag) VALUES ($1, $2, $3, $4) RETURNING owner)
  INSERT INTO webhook_deliveries (id, subscription_id, payload, state, attempts, next_attempt_at, created_at, trace_parent)
  SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), s.id, $5, 'pending', 0, $6, $7, NULL
  FROM webhook_subscriptions s JOIN p ON s.owner = p.owner WHERE s.disabled_at IS NULL`;

/**
 * The five statements of the hot path on PostgreSQL, each run by `query`, and the schema made
 * first; `close` ends what `query` runs on.
 */
export async function postgresStatements(
  query: PostgresQuery,
  close: () => Promise<void>,
): Promise<Store> {
  // Unnamed (name ''): each runs once.
  for (const statement of SCHEMA.postgres) await query('', statement, []);
  return {
    ownerOf: async (hash) =>
      (
        await query<{ owner: string }>(
          'owner',
          'SELECT owner FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL',
          [hash],
        )
      ).rows[0]?.owner,
    list: async (owner, limit) =>
      (
        await query<ListedRow>(
          'list',
          'SELECT CAST(id AS TEXT) AS id, name, tag FROM plants WHERE owner = $1 ORDER BY plants.id LIMIT $2',
          [owner, limit],
        )
      ).rows,
    insert: async (owner, id, name, tag, event) => {
      try {
        const now = Date.now();
        // Plant and events in one statement, as the service writes them.
        await query('insert', POSTGRES_CREATE, [owner, id.toString(), name, tag, event, now, now]);
        return true;
      } catch (error) {
        if ((error as { code?: string }).code === '23505') return false;
        throw error;
      }
    },
    find: async (owner, id) =>
      (
        await query<PlantRow>('find', 'SELECT name, tag FROM plants WHERE owner = $1 AND id = $2', [
          owner,
          id.toString(),
        ])
      ).rows[0],
    remove: async (owner, id) =>
      ((
        await query('remove', 'DELETE FROM plants WHERE owner = $1 AND id = $2', [
          owner,
          id.toString(),
        ])
      ).rowCount ?? 0) > 0,
    close,
  };
}

/**
 * The service's pool settings at their defaults (DB_POOL_SIZE, DB_*_TIMEOUT_MS): the same driver
 * work. Unnamed statements, as the service runs them so that it is safe behind PgBouncer in
 * transaction mode; with `namedStatements` (REFERENCE_NAMED_STATEMENTS=true), named ones,
 * parsed and planned once per connection: what that constraint costs, measured directly only
 * (through PgBouncer in transaction mode a name meets a server connection that lacks it or
 * already has it).
 */
function postgresStore(url: string, poolSize: number, namedStatements: boolean): Promise<Store> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    ...POSTGRES_POOL,
  });
  return postgresStatements(
    (name, text, values) =>
      namedStatements && name ? pool.query({ name, text, values }) : pool.query(text, values),
    () => pool.end(),
  );
}

/**
 * `sqlite:<file>` or a PostgreSQL URL, as bench/run.ts passes DATABASE_URL to a server.
 * `namedStatements`: PostgreSQL only (SQLite's statements are prepared once either way).
 */
export async function openStore(
  url: string,
  poolSize: number,
  namedStatements = false,
): Promise<Store> {
  return url.startsWith('sqlite:')
    ? sqliteStore(url.slice('sqlite:'.length), 10_000)
    : postgresStore(url, poolSize, namedStatements);
}
