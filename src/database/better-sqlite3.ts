import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export type BetterSqlite3Driver = typeof BetterSqlite3;

const require = createRequire(import.meta.url);

const NAPI_PACKAGE = 'better-sqlite3-napi';

/**
 * better-sqlite3 for the Node.js this process runs on. Versions before 13
 * abort the process on Node >= 24.19 when the garbage collector finalises a
 * statement outside a V8 context (upstream: WiseLibs/better-sqlite3#1515,
 * closed without a fix for 12.x); 13 (Node-API) fixes that but requires
 * Node 22 and crashes on Node 20. So Node 20 loads 12 (`better-sqlite3`)
 * and Node 22+ loads 13 (installed as `better-sqlite3-napi`); CI runs the
 * whole suite on both.
 *
 * 13 is an optional dependency: npm installs it only where its engines
 * (Node >= 22) allow, so an install on Node 20 neither warns about it nor
 * fetches it. A checkout installed on Node 20 and then run on Node 22+ lacks
 * it, and is told to install again.
 */
export function loadBetterSqlite3(
  nodeVersion = process.versions.node,
  load: (name: string) => unknown = require,
): BetterSqlite3Driver {
  if (Number(nodeVersion.split('.')[0]) < 22) return load('better-sqlite3') as BetterSqlite3Driver;
  try {
    return load(NAPI_PACKAGE) as BetterSqlite3Driver;
  } catch (error) {
    const missing =
      (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' &&
      (error as Error).message.includes(`'${NAPI_PACKAGE}'`);
    if (!missing) throw error;
    throw new Error(
      `${NAPI_PACKAGE} (better-sqlite3 13, needed on Node ${nodeVersion}) is not installed: ` +
        `npm skips this optional dependency on Node < 22. Run npm install again on this Node version.`,
      { cause: error },
    );
  }
}
