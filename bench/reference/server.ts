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
import { pathToFileURL } from 'node:url';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import {
  bearerToken,
  challenge,
  createPlant,
  deletePlant,
  errorAnswer,
  errorSchema,
  HttpError,
  listPlants,
  parseJsonBody,
  plantSchema,
  tokenHash,
} from './contract.js';
import { openStore, type Store } from './store.js';

async function authenticate(store: Store, request: FastifyRequest): Promise<string> {
  const token = bearerToken(request.headers.authorization);
  if (token === undefined) throw new HttpError(401, 'a bearer token is required', challenge());
  const owner = await store.ownerOf(tokenHash(token));
  if (owner === undefined) {
    throw new HttpError(401, 'the bearer token is unknown or revoked', challenge('invalid_token'));
  }
  return owner;
}

export async function buildReference(store: Store, bodyLimit: number) {
  const app = Fastify({ bodyLimit });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply: FastifyReply) => {
    const answer = errorAnswer(error, error.statusCode);
    if (answer.status === 500) app.log.error(error);
    void reply.code(answer.status).headers(answer.headers).send(answer.body);
  });
  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ error: 404, message: 'no such route' });
  });

  app.get(
    '/plants',
    { schema: { response: { 200: { type: 'array', items: plantSchema }, '4xx': errorSchema } } },
    async (request) =>
      listPlants(
        store,
        await authenticate(store, request),
        request.query as Record<string, unknown>,
      ),
  );

  app.post(
    '/plants',
    { schema: { response: { 200: plantSchema, '4xx': errorSchema } } },
    async (request) => createPlant(store, await authenticate(store, request), request.body),
  );

  app.delete('/plants/:id', async (request, reply) => {
    const owner = await authenticate(store, request);
    await deletePlant(store, owner, (request.params as { id: string }).id);
    return reply.code(204).send();
  });

  app.get('/health/live', async () => ({ status: 'ok' }));
  return app;
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL ?? 'sqlite:./data/reference.sqlite';
  const store = await openStore(url, Number(process.env.DB_POOL_SIZE ?? 10));
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
