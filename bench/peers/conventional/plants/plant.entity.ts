import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('plants')
export class Plant {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  owner!: string;

  @PrimaryColumn({ type: 'bigint' })
  id!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  tag!: string | null;
}
