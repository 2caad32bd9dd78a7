import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { OutboxSignal } from '../database/outbox-signal.js';
import { Transactions } from '../database/transactions.js';
import { PlantMetrics } from '../metrics/plant-metrics.js';
import { PlantCreatedOutbox } from '../webhooks/webhook-storage.module.js';
import type { NewPlantDto } from './dto/new-plant.dto.js';
import { PlantDto } from './dto/plant.dto.js';
import { type PlantRow, PlantsRepository, type StoredPlant } from './plants.repository.js';

/** Rows read per query when a list is streamed: bounds the memory a list of any size takes. */
export const LIST_PAGE_SIZE = 1000;

/**
 * A list small enough to come back in one query is returned whole; a longer
 * one is returned as its first page plus the pages that follow, read lazily
 * while the response is written.
 */
export type PlantList =
  | { complete: true; plants: PlantDto[] }
  | { complete: false; plants: PlantDto[]; rest: AsyncIterable<PlantDto[]> };

const notFound = (id: bigint) => new NotFoundException(`no plant with id ${id}`);

const toDto = (plant: PlantRow): PlantDto => new PlantDto(plant.name, plant.tag);

@Injectable()
export class PlantsService {
  constructor(
    private readonly plants: PlantsRepository,
    private readonly metrics: PlantMetrics,
    private readonly outbox: OutboxSignal,
    private readonly events: PlantCreatedOutbox,
    private readonly transactions: Transactions,
  ) {}

  /**
   * Creates the owner's plant and, in the same transaction, its plant-created
   * events. The primary key (owner, id) decides races, in the database: of
   * concurrent creates of one id exactly one inserts. A replay of the same
   * plant answers as the first create did; the same id with another name or
   * tag is a conflict.
   */
  async create(owner: string, plant: NewPlantDto): Promise<PlantDto> {
    const stored = { id: plant.id, name: plant.name, tag: plant.tag ?? null };
    const events = await this.transactions.run(async (manager) => {
      if (!(await this.plants.insert(manager, owner, stored.id, stored.name, stored.tag))) {
        return undefined;
      }
      return this.events.record(manager, owner, stored);
    });
    if (events !== undefined) {
      this.metrics.plantCreated();
      if (events > 0) this.outbox.notify();
      return new PlantDto(stored.name, stored.tag);
    }
    const existing = await this.plants.findOne(owner, plant.id);
    if (existing && existing.name === stored.name && existing.tag === stored.tag) {
      return toDto(existing);
    }
    throw new ConflictException(
      `a plant with id ${plant.id} already exists with a different name or tag`,
    );
  }

  async list(owner: string, limit?: number): Promise<PlantList> {
    // A list that fits in one page needs no id to go on from: one cheaper query (see head()).
    if (limit !== undefined && limit <= LIST_PAGE_SIZE) {
      return { complete: true, plants: (await this.plants.head(owner, limit)).map(toDto) };
    }
    const wanted = limit ?? Infinity;
    const firstSize = Math.min(wanted, LIST_PAGE_SIZE);
    const first = await this.plants.page(owner, firstSize);
    const plants = first.map(toDto);
    if (first.length < firstSize || first.length >= wanted) return { complete: true, plants };
    return { complete: false, plants, rest: this.pagesAfter(owner, first, wanted - first.length) };
  }

  private async *pagesAfter(
    owner: string,
    previous: StoredPlant[],
    remaining: number,
  ): AsyncGenerator<PlantDto[]> {
    let last = previous[previous.length - 1].id;
    while (remaining > 0) {
      const size = Math.min(remaining, LIST_PAGE_SIZE);
      const page = await this.plants.page(owner, size, last);
      if (page.length === 0) return;
      yield page.map(toDto);
      if (page.length < size) return;
      remaining -= page.length;
      last = page[page.length - 1].id;
    }
  }

  /** The owner's plant with this id; another owner's is as unknown as a missing one. */
  async get(owner: string, id: bigint): Promise<PlantDto> {
    const plant = await this.plants.findOne(owner, id);
    if (!plant) throw notFound(id);
    return toDto(plant);
  }

  async delete(owner: string, id: bigint): Promise<void> {
    const deleted = await this.transactions.write((manager) =>
      this.plants.delete(manager, owner, id),
    );
    if (!deleted) {
      throw notFound(id);
    }
    this.metrics.plantDeleted();
  }
}
