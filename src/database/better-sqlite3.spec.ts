import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadBetterSqlite3 } from './better-sqlite3.js';

const require = createRequire(import.meta.url);

describe('loadBetterSqlite3', () => {
  it('loads better-sqlite3 13 from Node 22 on and 12 before, and it works', () => {
    const Database = loadBetterSqlite3();
    const major = Number(process.versions.node.split('.')[0]);
    const expected = require(major >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3') as unknown;
    expect(Database).toBe(expected);
    const db = new Database(':memory:');
    expect(db.prepare('SELECT CAST(9223372036854775807 AS TEXT) AS v').get()).toEqual({
      v: '9223372036854775807',
    });
    db.close();
  });
});
