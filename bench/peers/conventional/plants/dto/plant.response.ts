import { Exclude, Transform } from 'class-transformer';
import type { Plant } from '../plant.entity.js';

/** What ClassSerializerInterceptor turns a stored plant into: no owner, no id, no null tag. */
export class PlantResponse {
  @Exclude()
  owner!: string;

  @Exclude()
  id!: number;

  name!: string;

  @Transform(({ value }: { value: string | null }) => value ?? undefined)
  tag?: string | null;

  constructor(plant: Partial<Plant>) {
    Object.assign(this, plant);
  }
}
