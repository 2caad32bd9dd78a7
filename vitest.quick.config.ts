import { readdirSync, readFileSync } from 'node:fs';
import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * `npm run test:quick`, the contributor's loop: the unit specs and the e2e
 * suites on SQLite (TEST_SQLITE_ONLY=true, set by the script, asks for no
 * PostgreSQL), about a minute on two cores, with no build first. It leaves
 * out the suites that start the built service as a process or drive a
 * browser (those that import test/support/service-process.ts or
 * test/support/chromium.ts: the cluster, fleet, crash, migrations-job and
 * tracing suites, Swagger UI in Chromium), and with them `npm run build`.
 * `npm test` stays the whole suite, on both databases; CI runs that.
 */
const SLOW_SUPPORT = /from '\.\/support\/(service-process|chromium)\.js'/;

const processLevel = readdirSync('test')
  .filter((name) => name.endsWith('.e2e-spec.ts'))
  .filter((name) => SLOW_SUPPORT.test(readFileSync(`test/${name}`, 'utf8')))
  .map((name) => `test/${name}`);

export default mergeConfig(
  base,
  defineConfig({ test: { exclude: [...configDefaults.exclude, ...processLevel] } }),
);
