import {
  ConflictException,
  Inject,
  Injectable,
  NotFoundException,
  ServiceUnavailableException,
} from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { OutboxSignal } from '../database/outbox-signal.js';
import { earliestScope, type RequestScope } from '../database/request-scope.js';
import { RetriedOnce } from '../database/retried-once.decorator.js';
import { Transactions } from '../database/transactions.js';
import { KeyedWriteBatches } from '../database/write-batch.js';
import { PlantMetrics } from './plant-metrics.js';
import { currentTraceparent } from '../tracing/trace-hooks.js';
import type { ListPlantsQuery } from './dto/list-plants.query.js';
import type { NewPlantDto } from './dto/new-plant.dto.js';
import { PlantDto } from './dto/plant.dto.js';
import {
  type CreatedPlant,
  type CreatedPlantStatementPart,
  PLANT_CREATED_EVENTS,
  type PlantCreatedEvents,
} from './plant-created.port.js';
import {
  FIRST_STREAMED_PAGE,
  LIST_PAGE_SIZE,
  pagesAfter,
  type PlantList,
  toDto,
  upTo,
} from './list-pages.js';
import { type InsertManyThen, PlantsRepository } from './plants.repository.js';

/**
 * Inserts a create tries while each finds the id taken and then gone: only
 * another client creating and deleting the same id over and over exhausts them.
 */
const CREATE_ATTEMPTS = 5;

/** A create's write: its plant, and the trace its events link to. */
interface CreateWrite {
  owner: string;
  plant: CreatedPlant;
  traceparent: string | null;
  scope: RequestScope;
}

/** A delete's write. */
type DeleteWrite = Pick<CreateWrite, 'owner' | 'scope'> & { id: bigint };

/**
 * Creates of one owner as one statement: for each, how many events its plant
 * set off, or undefined when its id was taken (in the table, or by a create
 * before it in `writes`, the winner) and nothing of it was written. The
 * statement runs within the earliest deadline among them, so that none is
 * answered after its own: a statement ended there fails, and WriteBatch
 * writes its creates again one by one, each within its own deadline.
 */
async function insertMany(
  manager: EntityManager,
  writes: CreateWrite[],
  statement: InsertManyThen<string>,
  part: CreatedPlantStatementPart,
): Promise<(number | undefined)[]> {
  const firsts = new Map<bigint, CreateWrite>();
  for (const write of writes) {
    if (!firsts.has(write.plant.id)) firsts.set(write.plant.id, write);
  }
  const written = [...firsts.values()];
  const { inserted, followed } = await statement.run(
    manager,
    written[0].owner,
    written.map((write) => write.plant),
    written.map(({ plant, traceparent }) => part.values(plant, traceparent)),
    earliestScope(written.map((write) => write.scope)),
  );
  // One owner's plants: each sets off one event per active subscription.
  const events = inserted.size === 0 ? 0 : followed / inserted.size;
  return writes.map((write) =>
    firsts.get(write.plant.id) === write && inserted.has(String(write.plant.id))
      ? events
      : undefined,
  );
}

const notFound = (id: bigint) => new NotFoundException(`no plant with id ${id}`);

@Injectable()
export class PlantsService {
  /**
   * Writes a create's plant and events, and a delete: on SQLite those that
   * arrive while a commit is under way share the next one (one flush),
   * each answered once it has committed (Transactions.grouped). There the
   * insert ignores a taken id rather than failing, so one create's conflict
   * is its own, and a delete of a plant already gone is that delete's 404.
   * On PostgreSQL a delete is a statement of its own, and so is a create
   * (PlantsRepository.insertThen), which a taken id fails alone; an owner's
   * creates that arrive while another of that owner's is being written are
   * written together in the next statement (PlantsRepository.insertManyThen,
   * where a taken id inserts nothing and fails no other), one such statement
   * of an owner at a time (KeyedWriteBatches).
   */
  private readonly insertOne: (write: CreateWrite) => Promise<number | undefined>;
  private readonly deleteOne: (target: DeleteWrite) => Promise<boolean>;

  constructor(
    private readonly plants: PlantsRepository,
    private readonly metrics: PlantMetrics,
    private readonly outbox: OutboxSignal,
    @Inject(PLANT_CREATED_EVENTS) private readonly events: PlantCreatedEvents,
    transactions: Transactions,
  ) {
    // On PostgreSQL the plant and its events are one statement, and so are
    // an owner's creates written together; on SQLite a transaction of two
    // statements per create, grouped with the creates that arrive meanwhile.
    const eventsPart = this.events.statementPart('created');
    const oneStatement = plants.insertThen(eventsPart);
    const manyStatement = plants.insertManyThen(eventsPart.many);
    if (oneStatement && manyStatement) {
      const batches = new KeyedWriteBatches<CreateWrite, number | undefined>(
        (write) => write.owner,
        (writes) =>
          transactions.write((manager) => insertMany(manager, writes, manyStatement, eventsPart)),
        ({ owner, plant, traceparent, scope }) =>
          transactions.write((manager) =>
            oneStatement.run(
              manager,
              { owner, ...plant, ...eventsPart.values(plant, traceparent) },
              scope,
            ),
          ),
      );
      this.insertOne = (write) => batches.add(write);
    } else {
      this.insertOne = transactions.grouped((manager, write: CreateWrite) =>
        this.insertWithEvents(manager, write),
      );
    }
    this.deleteOne = transactions.grouped(
      (manager, { owner, id, scope }: DeleteWrite) => this.plants.delete(manager, owner, id, scope),
      { onPostgres: 'statement' },
    );
  }

  /**
   * Creates the owner's plant and, in the same transaction, its plant-created
   * events. The primary key (owner, id) decides races, in the database: of
   * concurrent creates of one id exactly one inserts. A replay of the same
   * plant answers as the first create did; the same id with another name or
   * tag is a conflict.
   *
   * The insert and the lookup of the plant it found are two statements: a
   * delete that commits between them leaves nothing to compare with, and the
   * create then inserts again, as a create of its own, rather than calling an
   * exact replay a conflict.
   *
   * A create that may have committed before its connection was lost is run
   * again: its exact replay answers as the first create did and writes no event.
   */
  @RetriedOnce('repeatable')
  async create(owner: string, plant: NewPlantDto, scope: RequestScope): Promise<PlantDto> {
    const stored = { id: plant.id, name: plant.name, tag: plant.tag ?? null };
    for (let attempt = 1; attempt <= CREATE_ATTEMPTS; attempt++) {
      const answer = await this.insertOrCompare(owner, stored, scope);
      if (answer) return answer;
    }
    throw new ServiceUnavailableException(
      `the plant with id ${plant.id} was deleted and created again throughout this create: retry it`,
    );
  }

  /** One insert, else the plant in its way: undefined when that plant was deleted meanwhile. */
  private async insertOrCompare(
    owner: string,
    stored: CreatedPlant,
    scope: RequestScope,
  ): Promise<PlantDto | undefined> {
    const traceparent = currentTraceparent() ?? null;
    const write: CreateWrite = { owner, plant: stored, traceparent, scope };
    const events = await this.insertOne(write);
    if (events !== undefined) {
      this.metrics.plantCreated();
      if (events > 0) this.outbox.notify();
      return new PlantDto(stored.name, stored.tag);
    }
    const existing = await this.plants.findOne(owner, stored.id, scope);
    if (!existing) return undefined;
    if (existing.name === stored.name && existing.tag === stored.tag) {
      return toDto(existing);
    }
    throw new ConflictException(
      `a plant with id ${stored.id} already exists with a different name or tag`,
    );
  }

  /** The plant and its events on `manager`; undefined, writing nothing, when its id is taken. */
  private async insertWithEvents(
    manager: EntityManager,
    { owner, plant, traceparent }: CreateWrite,
  ): Promise<number | undefined> {
    if (!(await this.plants.insert(manager, owner, plant.id, plant.name, plant.tag))) {
      return undefined;
    }
    return this.events.record(manager, owner, plant, traceparent);
  }

  /**
   * The owner's plants in ascending id order, after the id `after` when given
   * (keyset paging: a plant created or deleted elsewhere in the list never
   * shifts a page), at most `limit` of them when given.
   */
  @RetriedOnce('repeatable')
  async list(
    owner: string,
    { limit, after }: ListPlantsQuery,
    scope: RequestScope,
  ): Promise<PlantList> {
    const afterId = after === undefined ? undefined : String(after);
    if (limit === 0) return { complete: true, plants: [] };
    if (limit !== undefined && limit <= LIST_PAGE_SIZE) {
      // One more row than asked tells whether a next page exists, in the same query.
      const rows = await this.plants.page(owner, limit + 1, afterId, scope);
      if (rows.length <= limit) return { complete: true, plants: rows.map(toDto) };
      return {
        complete: true,
        plants: rows.slice(0, limit).map(toDto),
        next: rows[limit - 1].id,
      };
    }
    // A longer page is streamed, and its Link header goes out before its rows:
    // where the page ends is read first, and the stream stops there, at that
    // id, never after a count of rows: a plant created inside the page while
    // it streams would push the page's last plant out of a count, and the
    // next link goes on after it. With fewer plants than the limit left, the
    // page goes on to the owner's last plant.
    const end =
      limit === undefined ? undefined : await this.plants.pageEnd(owner, limit, afterId, scope);
    const first = await this.plants.page(owner, FIRST_STREAMED_PAGE, afterId, scope);
    const through = end === undefined ? undefined : BigInt(end.lastId);
    const plants = upTo(first, through).map(toDto);
    const next = end?.more ? end.lastId : undefined;
    if (first.length < FIRST_STREAMED_PAGE || plants.length < first.length) {
      return { complete: true, plants, next };
    }
    const later = scope.later();
    return {
      complete: false,
      plants,
      // Read while the answer is written, at its client's pace: without the request's deadline.
      rest: pagesAfter(
        (size, after) => this.plants.page(owner, size, after, later),
        first,
        through,
      ),
      next,
    };
  }

  /** The owner's plant with this id; another owner's is as unknown as a missing one. */
  @RetriedOnce('repeatable')
  async get(owner: string, id: bigint, scope: RequestScope): Promise<PlantDto> {
    const plant = await this.plants.findOne(owner, id, scope);
    if (!plant) throw notFound(id);
    return toDto(plant);
  }

  /** Deletes the owner's plant; not repeated once its statement may have run. */
  @RetriedOnce('if-nothing-ran')
  async delete(owner: string, id: bigint, scope: RequestScope): Promise<void> {
    const deleted = await this.deleteOne({ owner, id, scope });
    if (!deleted) {
      throw notFound(id);
    }
    this.metrics.plantDeleted();
  }
}
