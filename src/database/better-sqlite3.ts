import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type BetterSqlite3Driver = typeof BetterSqlite3;

const require = createRequire(import.meta.url);

/**
 * better-sqlite3 for the Node.js this process runs on. Versions before 13
 * abort the process on Node >= 24.19 when the garbage collector finalises a
 * statement outside a V8 context (upstream: WiseLibs/better-sqlite3#1515,
 * closed without a fix for 12.x); 13 (Node-API) fixes that but requires
 * Node 22 and crashes on Node 20. So Node 20 loads 12 (`better-sqlite3`)
 * and Node 22+ loads 13 (installed as `better-sqlite3-napi`); CI runs the
 * whole suite on both.
 */
export function loadBetterSqlite3(): BetterSqlite3Driver {
  const major = Number(process.versions.node.split('.')[0]);
  return require(major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3') as BetterSqlite3Driver;
}
