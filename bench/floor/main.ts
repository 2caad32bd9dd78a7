/**
 * The floor of the benchmark: the reference's own handlers and store
 * (bench/reference) carried by the service's fixed stack and nothing else:
 * NestJS on its Fastify adapter, a global @nestjs/passport guard with
 * passport-http-bearer, a controller with a custom parameter decorator, and
 * an exception filter. No request log, metrics, rate limit, security headers,
 * request ids, validation pipe or TypeORM.
 *
 * `npm run bench -- --service floor` measures it in the service's place. Its
 * `cpu x` against the reference is what the fixed stack costs before any of
 * the service's own code: the part of the gap no change in src/ can remove.
 * Not part of the service. Run by bench/run.ts as a child process, with the
 * reference's environment (DATABASE_URL, PORT, HOST, DB_POOL_SIZE).
 */
import 'reflect-metadata';
import {
  type ArgumentsHost,
  Body,
  Catch,
  Controller,
  createParamDecorator,
  Delete,
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
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, NestFactory } from '@nestjs/core';
import { AuthGuard, PassportModule, PassportStrategy } from '@nestjs/passport';
import { FastifyAdapter, type NestFastifyApplication, RouteSchema } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Strategy } from 'passport-http-bearer';
import {
  createPlant,
  deletePlant,
  errorAnswer,
  errorSchema,
  listPlants,
  parseJsonBody,
  plantSchema,
  tokenHash,
} from '../reference/contract.js';
import { openStore, type Store } from '../reference/store.js';

const STORE = Symbol('STORE');

@Injectable()
class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(@Inject(STORE) private readonly store: Store) {
    super({ realm: 'plants' });
  }

  async validate(token: string): Promise<{ owner: string } | null> {
    const owner = await this.store.ownerOf(tokenHash(token));
    return owner === undefined ? null : { owner };
  }
}

const Owner = createParamDecorator(
  (_data: unknown, context: ExecutionContext) =>
    context.switchToHttp().getRequest<FastifyRequest & { user: { owner: string } }>().user.owner,
);

@Controller('plants')
class PlantsController {
  constructor(@Inject(STORE) private readonly store: Store) {}

  @Get()
  @RouteSchema({ response: { 200: { type: 'array', items: plantSchema }, '4xx': errorSchema } })
  list(@Owner() owner: string, @Query() query: Record<string, unknown>) {
    return listPlants(this.store, owner, query);
  }

  @Post()
  @HttpCode(200)
  @RouteSchema({ response: { 200: plantSchema, '4xx': errorSchema } })
  create(@Owner() owner: string, @Body() body: unknown) {
    return createPlant(this.store, owner, body);
  }

  @Delete(':id')
  @HttpCode(204)
  delete(@Owner() owner: string, @Param('id') id: string): Promise<void> {
    return deletePlant(this.store, owner, id);
  }
}

/** Errors in the contract's shape, as the reference's error handler answers them. */
@Catch()
class ErrorFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    const answer = errorAnswer(
      error,
      error instanceof HttpException ? error.getStatus() : undefined,
    );
    if (answer.status === 500) console.error(error);
    void host
      .switchToHttp()
      .getResponse<FastifyReply>()
      .code(answer.status)
      .headers(answer.headers)
      .send(answer.body);
  }
}

@Module({})
class FloorModule {
  static forStore(store: Store) {
    return {
      module: FloorModule,
      imports: [PassportModule],
      controllers: [PlantsController],
      providers: [
        { provide: STORE, useValue: store },
        BearerStrategy,
        { provide: APP_GUARD, useClass: AuthGuard('bearer') },
        { provide: APP_FILTER, useClass: ErrorFilter },
      ],
    };
  }
}

async function main(): Promise<void> {
  const store = await openStore(
    process.env.DATABASE_URL ?? 'sqlite:./data/floor.sqlite',
    Number(process.env.DB_POOL_SIZE ?? 10),
  );
  const app = await NestFactory.create<NestFastifyApplication>(
    FloorModule.forStore(store),
    new FastifyAdapter({ bodyLimit: 1024 * 1024 }),
    { bodyParser: false, logger: ['error', 'warn'] },
  );
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
  await app.listen(Number(process.env.PORT ?? 3002), process.env.HOST ?? '127.0.0.1');
  console.log(`Listening on ${await app.getUrl()}`);
  const stop = () => {
    void app.close().then(() => store.close());
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

await main();
