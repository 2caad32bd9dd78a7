import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { loadBetterSqlite3 } from '../src/database/better-sqlite3.js';
import { beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { components } from './support/openapi-types.js';
import { readCommittedDocument } from './support/openapi-validator.js';
import { listen } from './support/listen.js';
import { startApp, useTestApp } from './support/test-app.js';
import { createTestDatabase, databaseKinds } from './support/test-database.js';
import { startTestIssuer } from './support/test-issuer.js';
import { typedClient } from './support/typed-client.js';

type Plant = components['schemas']['Plant'];
type NewPlant = components['schemas']['NewPlant'];
type ApiError = components['schemas']['Error'];

/** What every openapi-fetch call answers; an error body must be the document's Error. */
interface Result {
  data?: unknown;
  error?: ApiError;
  response: Response;
}

const PLANTS_OPERATIONS = ['createPlant', 'listPlants', 'getPlant', 'deletePlant'] as const;
type PlantsOperation = (typeof PLANTS_OPERATIONS)[number];

interface DocumentedResponse {
  content?: { 'application/json'?: { examples?: Record<string, { value: ApiError }> } };
}

const document = readCommittedDocument();

function documentedResponses(operationId: PlantsOperation): Record<string, DocumentedResponse> {
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item as Record<string, unknown>)) {
      const op = operation as { operationId?: string; responses?: object };
      if (op.operationId === operationId) return op.responses as Record<string, DocumentedResponse>;
    }
  }
  throw new Error(`no operation ${operationId} in openapi.json`);
}

/** The messages openapi.json shows as examples for an operation's error status. */
function documentedMessages(operationId: PlantsOperation, status: number): string[] {
  const examples =
    documentedResponses(operationId)[status]?.content?.['application/json']?.examples;
  return Object.values(examples ?? {}).map((example) => example.value.message);
}

const execFileAsync = promisify(execFile);

describe('the generated client types', () => {
  it('are what openapi-typescript makes of the committed openapi.json (run npm run openapi:types)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'plant-store-types-'));
    try {
      const output = join(dir, 'openapi-types.ts');
      await execFileAsync(process.execPath, [
        'node_modules/openapi-typescript/bin/cli.js',
        'openapi.json',
        '--output',
        output,
      ]);
      expect(await readFile('test/support/openapi-types.ts', 'utf8')).toBe(
        await readFile(output, 'utf8'),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.each(databaseKinds())('a client generated from openapi.json on %s', (kind) => {
  const t = useTestApp(kind, { BODY_LIMIT_BYTES: '4096', DB_STATEMENT_TIMEOUT_MS: '500' });
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await listen(t.current);
  });

  /** `${operationId} ${status}` of every response received below, for the last test. */
  const received = new Set<string>();

  const caller = async () => typedClient(baseUrl, (await t.current.newCaller()).auth);

  function expectSuccess(operationId: PlantsOperation, result: Result, status: number): void {
    expect(result.response.status, JSON.stringify(result.error)).toBe(status);
    expect(result.error).toBeUndefined();
    received.add(`${operationId} ${status}`);
  }

  /** A documented error: the Error body, error = status, and a message the document shows. */
  function expectDocumentedError(
    operationId: PlantsOperation,
    result: Result,
    status: number,
  ): void {
    expect(result.response.status, JSON.stringify(result.error)).toBe(status);
    expect(result.data).toBeUndefined();
    expect(result.error?.error).toBe(status);
    expect(documentedMessages(operationId, status)).toContain(result.error?.message);
    received.add(`${operationId} ${status}`);
  }

  it('creates, lists and deletes plants with the types of the document', async () => {
    const plants = await caller();
    const fern: NewPlant = { id: 1, name: 'Fern', tag: 'green' };
    const cactus: NewPlant = { id: 2, name: 'Cactus' };

    const created = await plants.POST('/plants', { body: fern });
    expectSuccess('createPlant', created, 200);
    expectTypeOf(created.data).toEqualTypeOf<Plant | undefined>();
    expectTypeOf(created.error).toEqualTypeOf<ApiError | undefined>();
    const plant: Plant = created.data!;
    expect(plant).toEqual({ name: 'Fern', tag: 'green' });
    expect((await plants.POST('/plants', { body: cactus })).data).toEqual({ name: 'Cactus' });

    const listed = await plants.GET('/plants', { params: { query: { limit: 1 } } });
    expectSuccess('listPlants', listed, 200);
    expectTypeOf(listed.data).toEqualTypeOf<Plant[] | undefined>();
    expect(listed.data).toEqual([{ name: 'Fern', tag: 'green' }]);

    const deleted = await plants.DELETE('/plants/{id}', { params: { path: { id: fern.id } } });
    expectSuccess('deletePlant', deleted, 204);
    expect(deleted.data).toBeUndefined();
    expect((await plants.GET('/plants')).data).toEqual([{ name: 'Cactus' }]);
  });

  it('walks the pages of the list by their next links, and gets one plant by id, with the types of the document', async () => {
    const plants = await caller();
    const ids = [2n ** 63n - 1n, 5n, -(2n ** 63n), 1n];
    for (const id of ids) {
      const body = `{"id":${id},"name":"p${id}"}`;
      expectSuccess(
        'createPlant',
        await plants.POST('/plants', { body: body as never, bodySerializer: (b) => b }),
        200,
      );
    }
    const names: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await plants.GET('/plants', { params: { query: { limit: 3, after } } });
      expectSuccess('listPlants', page, 200);
      names.push(...page.data!.map((plant) => plant.name));
      pages += 1;
      const link = page.response.headers.get('link');
      if (link === null) break;
      after = new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1], 'http://x').searchParams.get(
        'after',
      )!;
    }
    expect(pages).toBe(2);
    expect(names).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)).map((id) => `p${id}`));
    const one = await plants.GET('/plants/{id}', { params: { path: { id: 5 } } });
    expectSuccess('getPlant', one, 200);
    expectTypeOf(one.data).toEqualTypeOf<Plant | undefined>();
    expect(one.data).toEqual({ name: 'p5' });
    expectDocumentedError(
      'getPlant',
      await plants.GET('/plants/{id}', { params: { path: { id: 3 } } }),
      404,
    );
  });

  it('gets the documented 400s, with the documented messages', async () => {
    const plants = await caller();
    expectDocumentedError(
      'createPlant',
      await plants.POST('/plants', { body: { id: 1, name: '' } }),
      400,
    );
    // The types forbid the next two bodies; a client that gets around them gets a 400.
    const stray = { name: 'x', colour: 'green' } as unknown as NewPlant;
    expectDocumentedError('createPlant', await plants.POST('/plants', { body: stray }), 400);
    expectDocumentedError(
      'createPlant',
      await plants.POST('/plants', {
        body: { id: 1, name: 'x' },
        bodySerializer: () => '{"id": 1, "name": ',
      }),
      400,
    );
    expectDocumentedError(
      'listPlants',
      await plants.GET('/plants', { params: { query: { limit: -1 } } }),
      400,
    );
    const unknownQuery = { colour: 'green' } as unknown as { limit?: number };
    expectDocumentedError(
      'listPlants',
      await plants.GET('/plants', { params: { query: unknownQuery } }),
      400,
    );
    expectDocumentedError(
      'deletePlant',
      await plants.DELETE('/plants/{id}', { params: { path: { id: 1.5 } } }),
      400,
    );
    expectDocumentedError(
      'getPlant',
      await plants.GET('/plants/{id}', { params: { path: { id: 1.5 } } }),
      400,
    );
    // Leading zeros past the router's 100 characters: its 414.
    const overLong = `${'0'.repeat(100)}7` as unknown as number;
    expectDocumentedError(
      'deletePlant',
      await plants.DELETE('/plants/{id}', { params: { path: { id: overLong } } }),
      414,
    );
    expectDocumentedError(
      'getPlant',
      await plants.GET('/plants/{id}', { params: { path: { id: overLong } } }),
      414,
    );
    expect((await plants.GET('/plants')).data).toEqual([]);
  });

  it('gets the documented 401s without a token and with an unknown one', async () => {
    for (const plants of [
      typedClient(baseUrl),
      typedClient(baseUrl, 'Bearer pst_unknown-token-0123456789abcdefghijklmnopqrstu'),
    ]) {
      for (const [operationId, result] of [
        ['createPlant', await plants.POST('/plants', { body: { id: 1, name: 'x' } })],
        ['listPlants', await plants.GET('/plants')],
        ['deletePlant', await plants.DELETE('/plants/{id}', { params: { path: { id: 1 } } })],
        ['getPlant', await plants.GET('/plants/{id}', { params: { path: { id: 1 } } })],
      ] as const) {
        expectDocumentedError(operationId, result, 401);
        expect(result.response.headers.get('www-authenticate')).toMatch(/^Bearer realm="plants"/);
      }
    }
  });

  it('gets the documented 404, 409, 413 and 415', async () => {
    const plants = await caller();
    expectDocumentedError(
      'deletePlant',
      await plants.DELETE('/plants/{id}', { params: { path: { id: 3 } } }),
      404,
    );
    expectDocumentedError(
      'getPlant',
      await plants.GET('/plants/{id}', { params: { path: { id: 3 } } }),
      404,
    );
    expectSuccess(
      'createPlant',
      await plants.POST('/plants', { body: { id: 7, name: 'Ivy', tag: 'vine' } }),
      200,
    );
    expectDocumentedError(
      'createPlant',
      await plants.POST('/plants', { body: { id: 7, name: 'Ivy', tag: 'fern' } }),
      409,
    );
    expectDocumentedError(
      'createPlant',
      await plants.POST('/plants', { body: { id: 8, name: 'x'.repeat(5000) } }),
      413,
    );
    expectDocumentedError(
      'createPlant',
      await plants.POST('/plants', {
        body: { id: 8, name: 'Moss' },
        bodySerializer: (body) => `id=${body.id}&name=${body.name}`,
        headers: { 'Content-Type': 'text/plain' },
      }),
      415,
    );
    expect((await plants.GET('/plants')).data).toEqual([{ name: 'Ivy', tag: 'vine' }]);
  });

  it('gets the documented 500 for a server fault', async () => {
    const plants = await caller();
    const dataSource = t.current.app.get(DataSource);
    await dataSource.query('ALTER TABLE plants RENAME TO plants_away');
    try {
      expectDocumentedError(
        'createPlant',
        await plants.POST('/plants', { body: { id: 1, name: 'x' } }),
        500,
      );
      expectDocumentedError('listPlants', await plants.GET('/plants'), 500);
      expectDocumentedError(
        'deletePlant',
        await plants.DELETE('/plants/{id}', { params: { path: { id: 1 } } }),
        500,
      );
      expectDocumentedError(
        'getPlant',
        await plants.GET('/plants/{id}', { params: { path: { id: 1 } } }),
        500,
      );
    } finally {
      await dataSource.query('ALTER TABLE plants_away RENAME TO plants');
    }
  });

  it('gets the documented 503, with Retry-After, while the plants table is locked', async () => {
    const plants = await caller();
    const calls: Array<[PlantsOperation, () => Promise<Result>]> = [
      ['createPlant', () => plants.POST('/plants', { body: { id: 1, name: 'x' } })],
      ['deletePlant', () => plants.DELETE('/plants/{id}', { params: { path: { id: 1 } } })],
    ];
    let unlock: () => Promise<void>;
    if (kind === 'sqlite') {
      const locker = new (loadBetterSqlite3())(t.current.database.url.slice('sqlite:'.length));
      locker.exec('BEGIN EXCLUSIVE');
      unlock = async () => {
        locker.exec('ROLLBACK');
        locker.close();
      };
    } else {
      const locker = new pg.Client({ connectionString: t.current.database.directUrl });
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE');
      unlock = async () => {
        await locker.query('ROLLBACK');
        await locker.end();
      };
      // On SQLite (WAL) a reader is never kept out by a writer, so only PostgreSQL gets here.
      calls.push(['listPlants', () => plants.GET('/plants')]);
      calls.push(['getPlant', () => plants.GET('/plants/{id}', { params: { path: { id: 1 } } })]);
    }
    try {
      for (const [operationId, call] of calls) {
        const result = await call();
        expectDocumentedError(operationId, result, 503);
        expect(result.response.headers.get('retry-after')).toBe('1');
      }
    } finally {
      await unlock();
    }
    expectSuccess('listPlants', await plants.GET('/plants'), 200);
  });

  it('gets the documented 429s, with Retry-After, once a budget is spent', async () => {
    // An app of its own: rate limits are off in the shared one, and the
    // failed-authentication limit below shuts out this whole client.
    const database = await createTestDatabase(kind);
    const limited = await startApp(database, {
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_MAX: '1',
      AUTH_FAILURE_LIMIT: '1',
    });
    try {
      const url = await listen(limited);
      const calls: Array<
        [PlantsOperation, (client: ReturnType<typeof typedClient>) => Promise<Result>]
      > = [
        ['createPlant', (c) => c.POST('/plants', { body: { id: 1, name: 'x' } })],
        ['listPlants', (c) => c.GET('/plants')],
        ['deletePlant', (c) => c.DELETE('/plants/{id}', { params: { path: { id: 1 } } })],
        ['getPlant', (c) => c.GET('/plants/{id}', { params: { path: { id: 1 } } })],
      ];
      for (const [operationId, call] of calls) {
        const client = typedClient(url, (await limited.newCaller()).auth);
        expect((await call(client)).response.status).not.toBe(429);
        const refused = await call(client);
        expectDocumentedError(operationId, refused, 429);
        expect(Number(refused.response.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      const guesser = typedClient(url, 'Bearer pst_wrong');
      expect((await guesser.GET('/plants')).response.status).toBe(401);
      const shutOut = await typedClient(url, (await limited.newCaller()).auth).GET('/plants');
      expectDocumentedError('listPlants', shutOut, 429);
      expect(shutOut.error?.message).toMatch(/failed authentications/);
    } finally {
      await limited.close();
      await database.drop();
    }
  });

  it("gets the documented 403s with an identity provider's token that lacks the scope", async () => {
    // An app of its own, with an identity provider whose scopes it requires.
    const issuer = await startTestIssuer('plant-store');
    const database = await createTestDatabase(kind);
    const scoped = await startApp(database, {
      AUTH_JWT_ISSUER: issuer.url,
      AUTH_JWT_AUDIENCE: 'plant-store',
      AUTH_JWT_REQUIRE_SCOPES: 'true',
    });
    try {
      const url = await listen(scoped);
      const reader = typedClient(url, `Bearer ${await issuer.sign({ scope: 'plants:read' })}`);
      const writer = typedClient(url, `Bearer ${await issuer.sign({ scope: 'plants:write' })}`);
      const calls: Array<[PlantsOperation, () => Promise<Result>]> = [
        ['createPlant', () => reader.POST('/plants', { body: { id: 1, name: 'x' } })],
        ['listPlants', () => writer.GET('/plants')],
        ['deletePlant', () => reader.DELETE('/plants/{id}', { params: { path: { id: 1 } } })],
        ['getPlant', () => writer.GET('/plants/{id}', { params: { path: { id: 1 } } })],
      ];
      for (const [operationId, call] of calls) {
        const refused = await call();
        expectDocumentedError(operationId, refused, 403);
        expect(refused.response.headers.get('www-authenticate')).toMatch(
          /^Bearer realm="plants", error="insufficient_scope", scope="plants:(read|write)"$/,
        );
      }
    } finally {
      await scoped.close();
      await database.drop();
      await issuer.close();
    }
  });

  it('has received every response the document declares for the plants operations', () => {
    const declared = PLANTS_OPERATIONS.flatMap((operationId) =>
      Object.keys(documentedResponses(operationId)).map((status) => `${operationId} ${status}`),
    );
    // See the 503 test: SQLite cannot make a list wait for the database.
    const unreachable = kind === 'sqlite' ? ['listPlants 503', 'getPlant 503'] : [];
    expect([...received].sort()).toEqual(
      declared.filter((response) => !unreachable.includes(response)).sort(),
    );
  });
});
