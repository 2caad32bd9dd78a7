import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Plant } from './plant.entity.js';

export interface StoredPlant {
  /** The id as a decimal string: exact for all of int64 on both databases. */
  id: string;
  name: string;
  tag: string | null;
}

/**
 * Owner-scoped queries on the plants table. Ids go in as decimal strings and
 * come out through CAST(id AS TEXT): better-sqlite3 would read a bigint
 * column into a JS number and round every id above 2^53.
 */
@Injectable()
export class PlantsRepository {
  constructor(@InjectRepository(Plant) private readonly plants: Repository<Plant>) {}

  /** Inserts a plant; a plant with the same owner and id makes it throw a unique violation. */
  async insert(owner: string, id: bigint, name: string, tag: string | null): Promise<void> {
    await this.plants
      .createQueryBuilder()
      .insert()
      .into(Plant)
      .values({ owner, id: id.toString(), name, tag })
      .updateEntity(false)
      .execute();
  }

  async findOne(owner: string, id: bigint): Promise<StoredPlant | undefined> {
    return this.plants
      .createQueryBuilder('plant')
      .select('CAST(plant.id AS TEXT)', 'id')
      .addSelect('plant.name', 'name')
      .addSelect('plant.tag', 'tag')
      .where('plant.owner = :owner AND plant.id = :id', { owner, id: id.toString() })
      .getRawOne<StoredPlant>();
  }

  /** One page of the owner's plants in ascending id order, after `afterId` when given (keyset paging). */
  async page(owner: string, size: number, afterId?: string): Promise<StoredPlant[]> {
    const query = this.plants
      .createQueryBuilder('plant')
      .select('CAST(plant.id AS TEXT)', 'id')
      .addSelect('plant.name', 'name')
      .addSelect('plant.tag', 'tag')
      .where('plant.owner = :owner', { owner })
      .orderBy('plant.id', 'ASC')
      .limit(size);
    if (afterId !== undefined) query.andWhere('plant.id > :afterId', { afterId });
    return query.getRawMany<StoredPlant>();
  }

  /** Deletes the owner's plant; false when the owner has no plant with that id. */
  async delete(owner: string, id: bigint): Promise<boolean> {
    const result = await this.plants
      .createQueryBuilder()
      .delete()
      .from(Plant)
      .where('owner = :owner AND id = :id', { owner, id: id.toString() })
      .execute();
    return (result.affected ?? 0) > 0;
  }
}
