import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  RUNTIME_NODE_ARGS as BENCH_NODE_ARGS,
  RUNTIME_NODE_OPTIONS,
  SERVICE_ENTRY,
} from '../bench/support/processes.js';
import { RUNTIME_NODE_ARGS } from './support/service-process.js';

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

  it('are the same in the Dockerfile, npm run start:prod, the e2e tests and the bench', () => {
    expect(cmd).not.toBeNull();
    expect(JSON.parse(cmd![1])).toEqual(['node', ...RUNTIME_NODE_ARGS, SERVICE_ENTRY]);
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
});
