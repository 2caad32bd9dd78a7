import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { QueryFailedError, Repository } from 'typeorm';
import type { CreatePlantDto } from './dto/create-plant.dto.js';
import { Plant } from './plant.entity.js';

/** The driver codes of a primary-key violation: PostgreSQL's and SQLite's. */
const DUPLICATE_KEY = new Set(['23505', 'SQLITE_CONSTRAINT_PRIMARYKEY']);

@Injectable()
export class PlantsService {
  constructor(@InjectRepository(Plant) private readonly plants: Repository<Plant>) {}

  list(owner: string, limit?: number): Promise<Plant[]> {
    return this.plants.find({ where: { owner }, order: { id: 'ASC' }, take: limit });
  }

  async create(owner: string, dto: CreatePlantDto): Promise<Partial<Plant>> {
    const plant = { owner, id: dto.id, name: dto.name, tag: dto.tag ?? null };
    try {
      await this.plants.insert(plant);
      return plant;
    } catch (error) {
      const code =
        error instanceof QueryFailedError
          ? (error.driverError as { code?: string }).code
          : undefined;
      if (!DUPLICATE_KEY.has(code ?? '')) throw error;
    }
    const existing = await this.plants.findOneBy({ owner, id: dto.id });
    if (existing && existing.name === plant.name && existing.tag === plant.tag) return existing;
    throw new ConflictException(`a plant with id ${dto.id} already exists`);
  }

  async remove(owner: string, id: number): Promise<void> {
    const result = await this.plants.delete({ owner, id });
    if (!result.affected) throw new NotFoundException(`no plant with id ${id}`);
  }
}
