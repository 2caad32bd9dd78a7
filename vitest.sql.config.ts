import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run sql:snapshots` and `npm run sql:check`: the SQL snapshots of
 * test/sql/statements.sql-spec.ts alone, on SQLite and PostgreSQL (required
 * with CI=true, as for `npm test`). Not part of `npm test`, whose patterns do
 * not match it; CI runs it as a step of its own. (The include replaces the
 * base's: mergeConfig would add to it.)
 */
export default defineConfig({
  ...base,
  test: { ...base.test, include: ['test/sql/*.sql-spec.ts'] },
});
