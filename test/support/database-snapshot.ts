import type { DataSource } from 'typeorm';

/**
 * Every stored row, in a fixed order, as plain JSON: two snapshots are equal
 * exactly when nothing was written in between. Ids are read as text so that
 * no int64 is rounded on the way.
 */
export async function snapshotDatabase(dataSource: DataSource): Promise<string> {
  const plants: unknown[] = await dataSource.query(
    'SELECT owner, CAST(id AS TEXT) AS id, name, tag FROM plants ORDER BY owner, id',
  );
  const tokens: unknown[] = await dataSource.query(
    'SELECT id, token_hash, owner, label, created_at, revoked_at FROM api_tokens ORDER BY id',
  );
  return JSON.stringify({ plants, tokens });
}
