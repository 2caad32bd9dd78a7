import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * --slow-flush-ms N: every fsync and fdatasync of a server process takes N ms
 * longer, and is counted, through an LD_PRELOAD shim (bench/support/slow-flush.c)
 * compiled once per bench run into a temporary directory.
 *
 * It reaches SQLite's flushes: better-sqlite3's SQLite calls libc's fsync
 * (`nm -D better_sqlite3.node`: U fsync) from the server process itself, on its
 * event loop. PostgreSQL flushes in its own server processes, which the bench
 * does not start: there the shim would count nothing and slow nothing.
 */
export interface SlowFlush {
  /** The environment that slows and counts the flushes of the server called `name`. */
  envOf(name: string): Record<string, string>;
  /** The fsync + fdatasync calls of that server so far (0 before its first). */
  flushesOf(name: string): number;
}

const SOURCE = resolve('bench/support/slow-flush.c');

export function buildSlowFlush(delayMs: number): SlowFlush {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-slow-flush-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const shim = join(dir, 'slow-flush.so');
  const cc = spawnSync('cc', ['-shared', '-fPIC', '-O2', '-o', shim, SOURCE, '-ldl'], {
    encoding: 'utf8',
  });
  if (cc.status !== 0) {
    throw new Error(`--slow-flush-ms: cc could not build ${SOURCE}:\n${cc.error ?? cc.stderr}`);
  }
  const countFile = (name: string) => join(dir, `${name}.count`);
  return {
    envOf: (name) => ({
      LD_PRELOAD: shim,
      SLOW_FLUSH_MS: String(delayMs),
      SLOW_FLUSH_COUNT_FILE: countFile(name),
    }),
    flushesOf: (name) => {
      try {
        return Number(readFileSync(countFile(name), 'utf8') || '0');
      } catch {
        return 0;
      }
    },
  };
}
