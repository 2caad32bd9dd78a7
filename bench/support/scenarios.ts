import type autocannon from 'autocannon';
import type { Seeder } from './databases.js';

/** The owners every benchmarked server has a token for. */
const OWNERS = ['list', 'create', 'delete', 'mix', 'scale', 'big', 'probe'] as const;
export type Owner = (typeof OWNERS)[number];

export interface Target {
  /** The service, a yardstick (same-work, bare, floor, conventional) or the service's baseline. */
  name: string;
  url: string;
  /** The server's process: its CPU time is read around every run. */
  pid: number;
  seeder: Seeder;
  tokens: Record<Owner, string>;
  /** Counts the runs against this target, so that every run writes ids of its own. */
  runs: number;
  /** --slow-flush-ms (SQLite): the server's fsync + fdatasync calls so far. */
  flushes?: () => number;
}

export interface Scenario {
  name: string;
  description: string;
  /** Seeds what one run needs and returns the requests autocannon sends. */
  prepare(target: Target, durationSeconds: number): Promise<autocannon.Request[]>;
}

/** The plants every list scenario reads: ids 1..200 of its owner. */
export const LISTED_PLANTS = 200;
/** A token for every owner, and the plants the list scenarios read: what a target starts with. */
export async function seedOwners(seeder: Seeder): Promise<Record<Owner, string>> {
  const tokens = {} as Record<Owner, string>;
  for (const owner of OWNERS) tokens[owner] = await seeder.token(owner);
  for (const owner of ['list', 'mix'] as const) await seeder.plants(owner, 1n, LISTED_PLANTS);
  return tokens;
}

/** Ids of a run start here: run r writes ids r*RUN_SPAN + ... */
const RUN_SPAN = 1_000_000_000n;
/** A generous ceiling of the write rate, to size the plants a delete run may delete. */
const MAX_DELETES_PER_SECOND = 25_000;

const auth = (target: Target, owner: Owner) => ({
  authorization: `Bearer ${target.tokens[owner]}`,
});
const createBody = (id: bigint) => `{"id":${id},"name":"plant ${id}","tag":"bench"}`;

const list = (target: Target, owner: Owner, limit: number): autocannon.Request => ({
  method: 'GET',
  path: `/plants?limit=${limit}`,
  headers: auth(target, owner),
});

export const SCENARIOS: Scenario[] = [
  {
    name: 'list',
    description: `GET /plants?limit=20 over ${LISTED_PLANTS} stored plants`,
    prepare: async (target) => [list(target, 'list', 20)],
  },
  {
    name: 'create',
    description: 'POST /plants with unique ids',
    prepare: async (target) => {
      let next = BigInt(++target.runs) * RUN_SPAN;
      const headers = { ...auth(target, 'create'), 'content-type': 'application/json' };
      return [
        {
          method: 'POST',
          path: '/plants',
          headers,
          setupRequest: (request) => ({ ...request, body: createBody(next++) }),
        },
      ];
    },
  },
  {
    name: 'delete',
    description: 'DELETE /plants/{id} of stored plants',
    prepare: async (target, seconds) => {
      const base = BigInt(++target.runs) * RUN_SPAN;
      await target.seeder.plants('delete', base, MAX_DELETES_PER_SECOND * seconds);
      let next = base;
      return [
        {
          method: 'DELETE',
          path: '/plants/0',
          headers: auth(target, 'delete'),
          setupRequest: (request) => ({ ...request, path: `/plants/${next++}` }),
        },
      ];
    },
  },
  {
    name: 'mix',
    description: '70% list (limit=20), 20% create, 10% delete',
    prepare: async (target, seconds) => {
      const base = BigInt(++target.runs) * RUN_SPAN;
      await target.seeder.plants('mix', base, (MAX_DELETES_PER_SECOND / 10) * seconds);
      let deleted = base;
      let created = base + RUN_SPAN / 2n;
      let sequence = 0;
      const listRequest = list(target, 'mix', 20);
      const headers = auth(target, 'mix');
      return [
        {
          ...listRequest,
          setupRequest: (request) => {
            const slot = sequence++ % 10;
            if (slot < 7) return { ...request, ...listRequest, body: undefined };
            if (slot < 9) {
              return {
                ...request,
                method: 'POST',
                path: '/plants',
                headers: { ...headers, 'content-type': 'application/json' },
                body: createBody(created++),
              };
            }
            return {
              ...request,
              method: 'DELETE',
              path: `/plants/${deleted++}`,
              headers,
              body: undefined,
            };
          },
        },
      ];
    },
  },
];
