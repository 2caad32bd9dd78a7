import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  COMPILE_CACHE_SUPPORTED,
  RUNTIME_NODE_ARGS as BENCH_NODE_ARGS,
  RUNTIME_NODE_OPTIONS,
  SERVICE_ENTRY,
} from '../bench/support/processes.js';
import { killHard, RUNTIME_NODE_ARGS, startService } from './support/service-process.js';

/**
 * The service's Node runtime options live in four places: the Dockerfile (NODE_OPTIONS and
 * the CMD's V8 flags), `npm run start:prod`, the e2e tests that run the built service, and
 * the bench that measures it. They must not drift apart, and the running Node must accept
 * them: a V8 flag that a new Node drops makes `node` refuse to start (CI runs this on Node
 * 20 and on Node 24, the container's).
 */
describe('the runtime options of the built service', () => {
  const dockerfile = readFileSync('Dockerfile', 'utf8');
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
  const nodeOptions = /^ENV NODE_OPTIONS=(\S+)$/m.exec(dockerfile);
  const startProd = (
    JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }
  ).scripts['start:prod'];

  const warmUp = /^RUN (\["node", "scripts\/warm-compile-cache\.mjs".*\])$/m.exec(dockerfile);

  it('are the same in the Dockerfile, npm run start:prod, the e2e tests and the bench', () => {
    expect(cmd).not.toBeNull();
    expect(JSON.parse(cmd![1])).toEqual(['node', ...RUNTIME_NODE_ARGS, SERVICE_ENTRY]);
    // The image fills its compile cache with the CMD's own arguments: other V8 flags, another cache.
    expect(warmUp).not.toBeNull();
    expect(JSON.parse(warmUp![1])).toEqual([
      'node',
      'scripts/warm-compile-cache.mjs',
      ...RUNTIME_NODE_ARGS,
      SERVICE_ENTRY,
    ]);
    expect(nodeOptions?.[1]).toBe(RUNTIME_NODE_OPTIONS);
    expect(startProd.split(' ')).toEqual([
      'node',
      RUNTIME_NODE_OPTIONS,
      ...RUNTIME_NODE_ARGS,
      SERVICE_ENTRY,
    ]);
    expect(BENCH_NODE_ARGS).toEqual(RUNTIME_NODE_ARGS);
  });

  it('are accepted by this Node', () => {
    const run = spawnSync(
      process.execPath,
      [...RUNTIME_NODE_ARGS, '-e', 'process.stdout.write("started")'],
      {
        env: { PATH: process.env.PATH ?? '', NODE_OPTIONS: RUNTIME_NODE_OPTIONS },
        encoding: 'utf8',
      },
    );
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('started');
  });

  it("fill Node's compile cache as the image build does, and a start reads it", () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'plant-store-compile-cache-'));
    const env = {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      NODE_OPTIONS: RUNTIME_NODE_OPTIONS,
      NODE_COMPILE_CACHE: cacheDir,
    };
    try {
      const warm = (port: string, extraEnv: Record<string, string> = {}) =>
        spawnSync(
          process.execPath,
          ['scripts/warm-compile-cache.mjs', ...RUNTIME_NODE_ARGS, SERVICE_ENTRY],
          { env: { ...env, WARM_PORT: port, ...extraEnv }, encoding: 'utf8', timeout: 90_000 },
        );
      if (!COMPILE_CACHE_SUPPORTED) {
        const run = warm('3998');
        expect(run.status).toBe(0);
        expect(run.stderr).toBe(
          `warm-compile-cache: Node ${process.version} has no compile cache\n`,
        );
        expect(readdirSync(cacheDir)).toEqual([]);
        return;
      }
      const first = warm('3998');
      expect(first.stderr).toMatch(/^warm-compile-cache: \d+ entries in /);
      expect(first.status).toBe(0);
      // A second start finds the bundle's compiled code in the cache and uses it.
      const second = warm('3997', { NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
      expect(second.status).toBe(0);
      expect(second.stdout + second.stderr).toMatch(
        /V8 code cache for ESM \S*dist\/bundle\/main\.js was accepted/,
      );
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it('load TypeORM once, from the bundle, and none of it from node_modules', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-modules-'));
    // NODE_DEBUG=module: Node logs every CommonJS file it loads.
    const service = await startService(dir, {
      NODE_ENV: 'production',
      DATABASE_URL: `sqlite:${join(dir, 'plants.sqlite')}`,
      NODE_DEBUG: 'module',
    });
    try {
      expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
      const loaded = [...service.output().matchAll(/^MODULE \d+: load "([^"]+)"/gm)].map(
        ([, path]) => path,
      );
      expect(
        loaded.filter((path) => path.includes('/node_modules/fastify/')).length,
      ).toBeGreaterThan(0);
      expect(loaded.filter((path) => path.includes('/node_modules/typeorm/'))).toEqual([]);
    } finally {
      await killHard(service);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
