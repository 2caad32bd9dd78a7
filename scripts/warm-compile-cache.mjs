// Fills Node's compile cache (the directory NODE_COMPILE_CACHE names) for the
// service by starting it once:
//
//   node scripts/warm-compile-cache.mjs <node arguments...> dist/bundle/main.js
//
// The container image runs it at build time with its CMD's own arguments, as
// the user the container runs as: Node keeps one cache per Node version, V8
// flags and user id. Every start of the image then reads the cache from its
// read-only file system instead of parsing and compiling the bundle and the
// packages outside it (BENCHMARKS.md, "Start-up and RSS"). The bench warms the
// service's cache the same way before it measures start-up.
//
// The service runs on a throw-away SQLite file until its first answer, then
// stops on SIGINT; Node writes the cache as it exits. Node 20 has no compile
// cache (Node 22.1 added it): there the script says so and exits 0. With
// NODE_DEBUG_NATIVE=COMPILE_CACHE the service's own output shows what Node reads
// from the cache and writes to it.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

const fail = (message) => {
  process.stderr.write(`warm-compile-cache: ${message}\n`);
  process.exit(1);
};

const cacheDir = process.env.NODE_COMPILE_CACHE;
if (!cacheDir) fail('NODE_COMPILE_CACHE names no directory: nothing to fill');
if (typeof module.enableCompileCache !== 'function') {
  process.stderr.write(`warm-compile-cache: Node ${process.version} has no compile cache\n`);
  process.exit(0);
}
const args = process.argv.slice(2);
if (args.length === 0) fail('usage: warm-compile-cache.mjs <node arguments...> <entry>');

const port = process.env.WARM_PORT ?? '3999';
const dataDir = mkdtempSync(join(tmpdir(), 'warm-compile-cache-'));
/** @type {Buffer[]} */
const output = [];
const child = spawn(process.execPath, args, {
  env: {
    ...process.env,
    DATABASE_URL: `sqlite:${join(dataDir, 'warm.sqlite')}`,
    // A throw-away cursor key: production requires one, and this run pages nothing.
    CURSOR_SECRET: randomBytes(32).toString('base64url'),
    HOST: '127.0.0.1',
    PORT: port,
  },
  stdio: [
    'ignore',
    process.env.NODE_DEBUG_NATIVE ? 'inherit' : 'pipe',
    process.env.NODE_DEBUG_NATIVE ? 'inherit' : 'pipe',
  ],
});
/** @param {Buffer} chunk */
const keep = (chunk) => output.push(chunk);
child.stdout?.on('data', keep);
child.stderr?.on('data', keep);
/** @type {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} */
const exited = new Promise((resolve) =>
  child.once('exit', (code, signal) => resolve({ code, signal })),
);
let running = true;
void exited.then(() => (running = false));

/**
 * Whether a GET of `url` is answered at all.
 * @param {string} url
 * @returns {Promise<boolean>}
 */
const answers = (url) =>
  new Promise((resolve) => {
    get(url, (response) => response.resume().once('end', () => resolve(true))).once('error', () =>
      resolve(false),
    );
  });
/** What the service printed, for a failure's message. */
const printed = () => Buffer.concat(output).toString('utf8');

const started = Date.now();
let answered = false;
while (!answered) {
  if (!running) fail(`the service exited before its first answer:\n${printed()}`);
  if (Date.now() - started > 60_000) {
    child.kill('SIGKILL');
    fail(`the service did not answer within 60 s:\n${printed()}`);
  }
  answered = await answers(`http://127.0.0.1:${port}/health/live`);
  if (!answered) await sleep(20);
}
child.kill('SIGINT');
const { code, signal } = await exited;
rmSync(dataDir, { recursive: true, force: true });
if (code !== 0) fail(`the service exited with ${code ?? signal} on SIGINT:\n${printed()}`);
const entries = readdirSync(cacheDir, { recursive: true }).length;
if (entries === 0) fail(`Node wrote nothing to ${cacheDir}`);
process.stderr.write(`warm-compile-cache: ${entries} entries in ${cacheDir}\n`);
