/**
 * The floor peer of the benchmark: the same work as the same-work reference
 * (bench/reference: its checks and answers, its per-request features, its
 * SQL), on the least of the service's fixed stack: NestJS on its Fastify
 * adapter, one global guard that looks the token up, one exception filter, a
 * controller, and on PostgreSQL TypeORM's query runner in place of the
 * driver's pool. No class-validator, passport, throttler, failover pool or
 * deadline. Against the same-work reference it measures what the stack alone
 * costs: a ceiling on what the service can reach while it keeps that stack.
 * On SQLite it uses the reference's own store (better-sqlite3, no TypeORM):
 * TypeORM's SQLite driver shares one connection between concurrent
 * transactions, which would need the service's turns (src/database/transactions.ts).
 * Not part of the service. Run by bench/run.ts as a child process, with the
 * reference's environment (bench/reference/server.ts).
 */
import 'reflect-metadata';
import {
  type ArgumentsHost,
  Body,
  type CanActivate,
  Catch,
  Controller,
  createParamDecorator,
  Delete,
  type DynamicModule,
  type ExceptionFilter,
  type ExecutionContext,
  Get,
  HttpCode,
  HttpException,
  Inject,
  Injectable,
  Module,
  Param,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication, RouteSchema } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import {
  acceptJsonWithOwner,
  createPlant,
  createResponseSchema,
  deletePlant,
  listPlants,
  listResponseSchema,
  ownerOf,
  sendError,
} from '../../reference/contract.js';
import {
  addFeatures,
  featureSettings,
  loggerOptions,
  type Quota,
} from '../../reference/features.js';
import { openStore, POSTGRES_POOL, postgresStatements, type Store } from '../../reference/store.js';

const STORE = Symbol('store');
const QUOTA = Symbol('quota');

/** The reference's authentication: the token looked up on every request, then the quota. */
@Injectable()
class TokenGuard implements CanActivate {
  constructor(
    @Inject(STORE) private readonly store: Store,
    @Inject(QUOTA) private readonly quota: Quota,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    request.owner = await ownerOf(this.store, request);
    this.quota(request.owner, http.getResponse<FastifyReply>());
    return true;
  }
}

/** Every error in the reference's words, through Nest's filter. */
@Catch()
class ErrorFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    const status =
      error instanceof HttpException
        ? error.getStatus()
        : (error as { statusCode?: number } | null)?.statusCode;
    sendError(host.switchToHttp().getResponse<FastifyReply>(), error, status);
  }
}

/** The owner the guard found for the request's token. */
const Owner = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    context.switchToHttp().getRequest<FastifyRequest>().owner,
);

@Controller('plants')
class PlantsController {
  constructor(@Inject(STORE) private readonly store: Store) {}

  @Get()
  @RouteSchema({ response: listResponseSchema })
  async list(
    @Owner() owner: string,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const page = await listPlants(this.store, owner, query);
    if (page.link !== undefined) void reply.header('link', page.link);
    return page.plants;
  }

  @Post()
  @HttpCode(200)
  @RouteSchema({ response: createResponseSchema })
  create(@Owner() owner: string, @Body() body: unknown) {
    return createPlant(this.store, owner, body);
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Owner() owner: string, @Param('id') id: string): Promise<void> {
    await deletePlant(this.store, owner, id);
  }
}

@Module({})
class FloorModule {
  static forRoot(store: Store, quota: Quota): DynamicModule {
    return {
      module: FloorModule,
      controllers: [PlantsController],
      providers: [
        { provide: STORE, useValue: store },
        { provide: QUOTA, useValue: quota },
        { provide: APP_GUARD, useClass: TokenGuard },
        { provide: APP_FILTER, useClass: ErrorFilter },
      ],
    };
  }
}

/** The reference's statements through TypeORM's query runner, as the service runs its SQL. */
async function typeOrmStore(url: string, poolSize: number): Promise<Store> {
  const dataSource = await new DataSource({
    type: 'postgres',
    url,
    extra: { max: poolSize, ...POSTGRES_POOL },
  }).initialize();
  return postgresStatements(
    async <Row>(_name: string, text: string, values: unknown[]) => {
      const runner = dataSource.createQueryRunner();
      try {
        const result = await runner.query(text, values, true);
        return { rows: result.records as Row[], rowCount: result.affected ?? null };
      } finally {
        await runner.release();
      }
    },
    () => dataSource.destroy(),
  );
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL ?? 'sqlite:./data/floor.sqlite';
  const poolSize = Number(process.env.DB_POOL_SIZE ?? 10);
  const store = url.startsWith('sqlite:')
    ? await openStore(url, poolSize)
    : await typeOrmStore(url, poolSize);
  const features = featureSettings(process.env);
  const adapter = new FastifyAdapter({ bodyLimit: 1024 * 1024, ...loggerOptions(features) });
  const fastify = adapter.getInstance();
  const quota = addFeatures(fastify, features);
  acceptJsonWithOwner(fastify);
  const app = await NestFactory.create<NestFastifyApplication>(
    FloorModule.forRoot(store, quota),
    adapter,
    { bodyParser: false, logger: ['error', 'warn'] },
  );
  await app.listen(Number(process.env.PORT ?? 3004), process.env.HOST ?? '127.0.0.1');
  console.log(`Listening on ${await app.getUrl()}`);
  const stop = () => {
    void app.close().then(() => store.close());
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

await main();
