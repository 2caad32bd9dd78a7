/**
 * The hand-written reference of the benchmark: raw Fastify and the database
 * driver, doing what the service does on its hot path and no more: the bearer
 * token looked up by SHA-256 in the database on every request, owner-scoped
 * queries, an ordered list, a unique-key conflict answered 409 (an exact
 * replay 200), ids exact over int64. Not part of the service: it exists so
 * that `npm run bench` can say what NestJS and TypeORM cost.
 *
 * Run by bench/run.ts as a child process: DATABASE_URL, PORT, HOST, DB_POOL_SIZE.
 */
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { isInteger, parse } from 'lossless-json';
import { postgresStore, sqliteStore, type PlantRow, type Store } from './store.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const ID_RULE = `an integer from ${INT64_MIN} to ${INT64_MAX}`;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const plantSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, tag: { type: 'string' } },
  required: ['name'],
} as const;
const errorSchema = {
  type: 'object',
  properties: { error: { type: 'integer' }, message: { type: 'string' } },
} as const;

const toPlant = (row: PlantRow) => (row.tag === null ? { name: row.name } : row);

function textProblem(value: unknown, min: number): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (!value.isWellFormed()) return 'must not contain an unpaired surrogate';
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  let length = 0;
  for (const _ of value) length += 1;
  if (length < min) return 'must not be empty';
  if (length > 255) return 'must be at most 255 characters long';
  return undefined;
}

interface NewPlant {
  id: bigint;
  name: string;
  tag: string | null;
}

function newPlant(body: unknown): NewPlant {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'request body must be a JSON object');
  }
  const { id, name, tag = null, ...rest } = body as Record<string, unknown>;
  const problems = Object.keys(rest).map((key) => `property ${key} should not exist`);
  if (typeof id !== 'bigint' || id < INT64_MIN || id > INT64_MAX) {
    problems.push(`id must be ${ID_RULE}`);
  }
  const nameProblem = textProblem(name, 1);
  if (nameProblem) problems.push(`name ${nameProblem}`);
  const tagProblem = tag === null ? undefined : textProblem(tag, 0);
  if (tagProblem) problems.push(`tag ${tagProblem}`);
  if (problems.length > 0) throw new HttpError(400, problems.join('; '));
  return { id: id as bigint, name: name as string, tag: tag as string | null };
}

function limitOf(query: Record<string, unknown>): number {
  const { limit, ...rest } = query;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new HttpError(400, `property ${unknown[0]} should not exist`);
  if (limit === undefined) return 2_147_483_647;
  if (typeof limit !== 'string' || !/^\d{1,10}$/.test(limit) || Number(limit) > 2_147_483_647) {
    throw new HttpError(400, 'limit must be an integer from 0 to 2147483647');
  }
  return Number(limit);
}

function pathId(text: string): bigint {
  const id = /^-?\d{1,40}$/.test(text) ? BigInt(text) : undefined;
  if (id === undefined || id < INT64_MIN || id > INT64_MAX) {
    throw new HttpError(400, `id must be ${ID_RULE}`);
  }
  return id;
}

const challenge = (error?: string) => ({
  'www-authenticate': `Bearer realm="plants"${error ? `, error="${error}"` : ''}`,
});

async function authenticate(store: Store, request: FastifyRequest): Promise<string> {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer ([^\s]+)$/.exec(header);
  if (!match) throw new HttpError(401, 'a bearer token is required', challenge());
  const hash = createHash('sha256').update(match[1], 'utf8').digest('hex');
  const owner = await store.ownerOf(hash);
  if (owner === undefined) {
    throw new HttpError(401, 'the bearer token is unknown or revoked', challenge('invalid_token'));
  }
  return owner;
}

export async function buildReference(store: Store, bodyLimit: number) {
  const app = Fastify({ bodyLimit });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      // Integers as bigints, so that no id above 2^53 is rounded.
      done(
        null,
        parse(body as string, null, (text) => (isInteger(text) ? BigInt(text) : Number(text))),
      );
    } catch (error) {
      done(new HttpError(400, `request body is not valid JSON: ${(error as Error).message}`));
    }
  });
  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply: FastifyReply) => {
    const status =
      error instanceof HttpError
        ? error.status
        : error.statusCode && error.statusCode < 500
          ? error.statusCode
          : 500;
    const message = status === 500 ? 'internal server error' : error.message;
    if (status === 500) app.log.error(error);
    void reply
      .code(status)
      .headers(error instanceof HttpError ? error.headers : {})
      .send({ error: status, message });
  });
  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ error: 404, message: 'no such route' });
  });

  app.get(
    '/plants',
    { schema: { response: { 200: { type: 'array', items: plantSchema }, '4xx': errorSchema } } },
    async (request) => {
      const owner = await authenticate(store, request);
      const limit = limitOf(request.query as Record<string, unknown>);
      return (await store.list(owner, limit)).map(toPlant);
    },
  );

  app.post(
    '/plants',
    { schema: { response: { 200: plantSchema, '4xx': errorSchema } } },
    async (request) => {
      const owner = await authenticate(store, request);
      const plant = newPlant(request.body);
      if (await store.insert(owner, plant.id, plant.name, plant.tag)) return toPlant(plant);
      const existing = await store.find(owner, plant.id);
      if (existing && existing.name === plant.name && existing.tag === plant.tag) {
        return toPlant(existing);
      }
      throw new HttpError(
        409,
        `a plant with id ${plant.id} already exists with a different name or tag`,
      );
    },
  );

  app.delete('/plants/:id', async (request, reply) => {
    const owner = await authenticate(store, request);
    const id = pathId((request.params as { id: string }).id);
    if (!(await store.remove(owner, id))) throw new HttpError(404, `no plant with id ${id}`);
    return reply.code(204).send();
  });

  app.get('/health/live', async () => ({ status: 'ok' }));
  return app;
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL ?? 'sqlite:./data/reference.sqlite';
  const store = url.startsWith('sqlite:')
    ? sqliteStore(url.slice('sqlite:'.length), 10_000)
    : await postgresStore(url, Number(process.env.DB_POOL_SIZE ?? 10));
  const app = await buildReference(store, 1024 * 1024);
  const address = await app.listen({
    port: Number(process.env.PORT ?? 3001),
    host: process.env.HOST ?? '127.0.0.1',
  });
  console.log(`Listening on ${address}`);
  const stop = () => {
    void app.close().then(() => store.close());
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

// Run as a program (bench/run.ts starts it); imported, it only builds (in-process measurements).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
