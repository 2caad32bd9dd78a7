import type { EntityManager } from 'typeorm';

/** A plant as stored, as what its creation sets off sees it: no tag is null. */
export interface CreatedPlant {
  id: bigint;
  name: string;
  tag: string | null;
}

/**
 * On PostgreSQL, the part of a one-statement create that stores what the
 * plant sets off: `sql` is the command that follows the insert's CTE, reads
 * the inserted plant's owner from the CTE named when the part was asked for,
 * and changes as many rows as the plant set off events; `names` its
 * placeholders (named apart from the insert's), `values` fills them for one
 * plant.
 */
export interface CreatedPlantStatementPart {
  sql: string;
  names: readonly string[];
  values(plant: CreatedPlant, traceparent: string | null): Record<string, unknown>;
  /**
   * The same part for many plants of one owner in one statement: `sql` reads
   * from the CTE named when the part was asked for one row per inserted plant,
   * with its owner and, as text columns named by `perPlant`, that plant's
   * values of those names (from `values`); the other names' values are the
   * first plant's, placeholders as in the one-plant part.
   */
  many: { sql: string; names: readonly string[]; perPlant: readonly string[] };
}

/**
 * What a created plant sets off (the webhooks' outbox), written with the
 * plant so that both commit or neither does. The plants feature declares it
 * and injects it by PLANT_CREATED_EVENTS; the feature that listens provides
 * it, so the import arrow points from that feature to this file.
 */
export interface PlantCreatedEvents {
  /** Stores the plant's events on `manager`, the create's transaction; returns how many. */
  record(
    manager: EntityManager,
    owner: string,
    plant: CreatedPlant,
    traceparent: string | null,
  ): Promise<number>;
  /** The same as part of a one-statement create (PostgreSQL only). */
  statementPart(created: string): CreatedPlantStatementPart;
}

export const PLANT_CREATED_EVENTS = Symbol('PlantCreatedEvents');
