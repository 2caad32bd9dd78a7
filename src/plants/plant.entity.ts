import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A stored plant. `id` is a signed 64-bit integer; TypeORM is given it as a
 * decimal string and plants.repository.ts reads it back as text, so no value
 * above 2^53 is ever rounded through a JS number (SQLite's driver would).
 */
@Entity({ name: 'plants' })
export class Plant {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  owner!: string;

  @PrimaryColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  tag!: string | null;
}
