import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);

/**
 * The better-sqlite3 the service loads on this Node (src/database/better-sqlite3.ts,
 * outside the bench's compiled tree): 12 on Node 20, 13 (`better-sqlite3-napi`) on
 * Node 22+, so that the bench also runs on Node 24, the container's runtime.
 */
export const Database = require(
  Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3',
) as typeof BetterSqlite3;
