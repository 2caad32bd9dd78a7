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

  it('picks the package by the major version of Node', () => {
    const loaded: string[] = [];
    const load = (name: string) => loaded.push(name);
    for (const version of ['20.19.0', '21.7.3', '22.0.0', '24.21.0'])
      loadBetterSqlite3(version, load);
    expect(loaded).toEqual([
      'better-sqlite3',
      'better-sqlite3',
      'better-sqlite3-napi',
      'better-sqlite3-napi',
    ]);
  });

  it('tells to install again when Node 22+ finds the optional package missing', () => {
    const notInstalled = (name: string) => {
      throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
    };
    expect(() => loadBetterSqlite3('24.21.0', notInstalled)).toThrow(
      /^better-sqlite3-napi \(better-sqlite3 13, needed on Node 24\.21\.0\) is not installed: npm skips this optional dependency on Node < 22\. Run npm install again on this Node version\.$/,
    );
  });

  it('passes on any other failure to load it unchanged', () => {
    const broken = new Error('invalid ELF header');
    expect(() =>
      loadBetterSqlite3('24.21.0', () => {
        throw broken;
      }),
    ).toThrow(broken);
  });
});
