/**
 * The hand-written references of the benchmark: raw Fastify and the database
 * driver, doing what the service does on its hot path: the bearer token
 * looked up by SHA-256 in the database on every request, owner-scoped
 * queries, an ordered list, a unique-key conflict answered 409 (an exact
 * replay 200), ids exact over int64. The same-work reference adds the
 * service's per-request features (features.ts); the bare one
 * (REFERENCE_FEATURES=none) leaves them out, so that the two differ by what
 * those features cost. Not part of the service: they exist so that
 * `npm run bench` can say what NestJS, TypeORM and the service's code cost.
 *
 * Run by bench/run.ts as a child process: DATABASE_URL, PORT, HOST, DB_POOL_SIZE,
 * REFERENCE_FEATURES (all or none), REFERENCE_NAMED_STATEMENTS (true: named PostgreSQL
 * statements instead of the service's unnamed ones, see store.ts), and the service's
 * LOG_LEVEL, RATE_LIMIT_MAX, RATE_LIMIT_WINDOW_MS.
 */
import { pathToFileURL } from 'node:url';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import {
  acceptJsonWithOwner,
  createPlant,
  createResponseSchema,
  deletePlant,
  listPlants,
  listResponseSchema,
  ownerOf,
  sendError,
} from './contract.js';
import {
  addFeatures,
  featureSettings,
  type FeatureSettings,
  loggerOptions,
  type Quota,
} from './features.js';
import { openStore, type Store } from './store.js';

/** With `features`, the same-work reference; without, the bare one. */
export async function buildReference(store: Store, bodyLimit: number, features?: FeatureSettings) {
  const app = Fastify({ bodyLimit, ...(features ? loggerOptions(features) : {}) });
  const quota: Quota | undefined = features ? addFeatures(app, features) : undefined;
  acceptJsonWithOwner(app);
  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply: FastifyReply) =>
    sendError(reply, error, error.statusCode),
  );
  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ error: 404, message: 'no such route' });
  });
  const authenticate = async (request: FastifyRequest, reply: FastifyReply) => {
    request.owner = await ownerOf(store, request);
    quota?.(request.owner, reply);
  };

  app.get(
    '/plants',
    {
      preHandler: authenticate,
      schema: { response: listResponseSchema },
    },
    async (request, reply) => {
      const page = await listPlants(store, request.owner, request.query as Record<string, unknown>);
      if (page.link !== undefined) void reply.header('link', page.link);
      return page.plants;
    },
  );

  app.post(
    '/plants',
    {
      preHandler: authenticate,
      schema: { response: createResponseSchema },
    },
    async (request) => createPlant(store, request.owner, request.body),
  );

  app.delete('/plants/:id', { preHandler: authenticate }, async (request, reply) => {
    await deletePlant(store, request.owner, (request.params as { id: string }).id);
    return reply.code(204).send();
  });

  app.get('/health/live', async () => ({ status: 'ok' }));
  return app;
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL ?? 'sqlite:./data/reference.sqlite';
  const store = await openStore(
    url,
    Number(process.env.DB_POOL_SIZE ?? 10),
    process.env.REFERENCE_NAMED_STATEMENTS === 'true',
  );
  const app = await buildReference(
    store,
    1024 * 1024,
    process.env.REFERENCE_FEATURES === 'none' ? undefined : featureSettings(process.env),
  );
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
