import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository, SelectQueryBuilder } from 'typeorm';
import { CompiledQuery, slots } from '../database/compiled-query.js';
import { isPostgresUniqueViolationOn } from '../database/database-errors.js';
import type { RequestScope } from '../database/request-scope.js';
import { Plant } from './plant.entity.js';

/** A plant as a list shows it. */
export interface PlantRow {
  name: string;
  tag: string | null;
}

export interface StoredPlant extends PlantRow {
  /** The id as a decimal string: exact for all of int64 on both databases. */
  id: string;
}

/**
 * A plant's insert and its follow-up as one statement: `run` gives the
 * follow-up's row count, or undefined when the id was taken and nothing was
 * written. `sql` is the statement, for tests that pin it.
 */
export interface InsertThen<Slot extends string> {
  sql: string;
  run(
    manager: EntityManager,
    values: Readonly<Record<'owner' | 'id' | 'name' | 'tag' | Slot, unknown>>,
    scope: RequestScope,
  ): Promise<number | undefined>;
}

/**
 * Many plants of one owner, each id once, inserted and followed up as one
 * statement: `run` gives the ids it inserted (a taken id inserts nothing)
 * and the follow-up's row count. `values` holds each plant's values of the
 * follow-up's names, in the order of `plants`; `sql` is the statement, for
 * tests that pin it.
 */
export interface InsertManyThen<Slot extends string> {
  sql: string;
  run(
    manager: EntityManager,
    owner: string,
    plants: readonly Readonly<Pick<PlantRow, 'name' | 'tag'> & { id: bigint }>[],
    values: readonly Readonly<Record<Slot, unknown>>[],
    scope: RequestScope,
  ): Promise<{ inserted: ReadonlySet<string>; followed: number }>;
}

/**
 * Owner-scoped queries on the plants table, through a TypeORM
 * `Repository<Plant>`. The request path runs SQL its QueryBuilder generated
 * once (see compiled-query.ts for why); the list's LIMIT is written into the
 * SQL by the builder, so each page size gets its text, generated on first use.
 *
 * Ids go in as bigints and come out through CAST(id AS TEXT): better-sqlite3
 * would read a bigint column into a JS number and round every id above 2^53.
 * Every query walks the (owner, id) primary key: a list of 20 costs the same
 * over 200 or 1,000,000 plants.
 */
@Injectable()
export class PlantsRepository {
  private readonly insertOne: CompiledQuery<'owner' | 'id' | 'name' | 'tag'>;
  private readonly findOneById: CompiledQuery<'owner' | 'id'>;
  private readonly deleteOne: CompiledQuery<'owner' | 'id'>;
  private readonly lastOfFirst: CompiledQuery<'owner' | 'skip'>;
  private readonly lastOfPageAfter: CompiledQuery<'owner' | 'after' | 'skip'>;
  /** By page size: at most LIST_PAGE_SIZE + 1 texts each. */
  private readonly firstPage = new Map<number, CompiledQuery<'owner'>>();
  private readonly pageAfter = new Map<number, CompiledQuery<'owner' | 'after'>>();

  constructor(@InjectRepository(Plant) private readonly plants: Repository<Plant>) {
    // A replay of an existing (owner, id) inserts nothing rather than failing:
    // the caller tells a replay from a conflict, and no transaction is aborted.
    this.insertOne = CompiledQuery.build(
      plants
        .createQueryBuilder()
        .insert()
        .values(slots('owner', 'id', 'name', 'tag'))
        .orIgnore(),
    );
    this.findOneById = CompiledQuery.build(
      this.stored().where('p.owner = :owner AND p.id = :id', slots('owner', 'id')),
    );
    this.deleteOne = CompiledQuery.build(
      plants
        .createQueryBuilder()
        .delete()
        .where('owner = :owner AND id = :id', slots('owner', 'id')),
    );
    // The QueryBuilder writes OFFSET into the SQL text, and a page's size can
    // be any int32: these two keep it a parameter, with one text each. ORDER BY
    // names the column through its table: a bare "id" would be the text alias.
    const lastOf = (after: string) =>
      'SELECT CAST("p"."id" AS TEXT) AS "id" FROM "plants" "p" WHERE "p"."owner" = :owner' +
      after +
      ' ORDER BY "p"."id" ASC LIMIT 2 OFFSET :skip';
    this.lastOfFirst = CompiledQuery.fromSql(plants.manager.connection, lastOf(''), [
      'owner',
      'skip',
    ]);
    this.lastOfPageAfter = CompiledQuery.fromSql(
      plants.manager.connection,
      lastOf(' AND "p"."id" > :after'),
      ['owner', 'after', 'skip'],
    );
  }

  /** Selects the id as text, with name and tag. */
  private stored(): SelectQueryBuilder<Plant> {
    return this.plants
      .createQueryBuilder('p')
      .select('CAST(p.id AS TEXT)', 'id')
      .addSelect('p.name', 'name')
      .addSelect('p.tag', 'tag');
  }

  /**
   * Inserts the owner's plant on `manager` (the caller's transaction, which
   * also writes the plant's events); false when the owner already has a plant
   * with this id, and then nothing was written.
   */
  async insert(
    manager: EntityManager,
    owner: string,
    id: bigint,
    name: string,
    tag: string | null,
  ): Promise<boolean> {
    // Only in a transaction (SQLite's), whose connection is already checked out.
    return (await this.insertOne.affected(manager, { owner, id, name, tag })) > 0;
  }

  /**
   * On PostgreSQL, the insert of `insert` and a follow-up that reads the
   * inserted row's owner from the CTE `created` (the outbox's part), as one
   * statement: one round trip and no transaction to open and commit. Hand
   * written: TypeORM's QueryBuilder writes no data-modifying CTE. Returns
   * undefined on SQLite, where a create is a transaction of two statements.
   *
   * The follow-up is the statement's own command, so that its row count is
   * the statement's, and a taken id is the plant's unique violation, which
   * undoes the whole statement (nothing of it was written). A final SELECT
   * counting both CTEs' rows, with `ON CONFLICT DO NOTHING`, said the same at
   * about 1.6 times the database's CPU per create (BENCHMARKS.md, "The create
   * statement's cost in PostgreSQL").
   */
  insertThen<Slot extends string>(followUp: {
    sql: string;
    names: readonly Slot[];
  }): InsertThen<Slot> | undefined {
    const connection = this.plants.manager.connection;
    if (connection.options.type !== 'postgres') return undefined;
    const statement = CompiledQuery.fromSql(
      connection,
      `WITH "created" AS (
         INSERT INTO "plants" ("owner", "id", "name", "tag") VALUES (:owner, :id, :name, :tag)
         RETURNING "owner"
       ) ${followUp.sql}`,
      ['owner', 'id', 'name', 'tag', ...followUp.names],
    );
    const table = this.plants.metadata.tableName;
    return {
      sql: statement.sql,
      run: async (...call) => {
        try {
          return await statement.affected(...call);
        } catch (error) {
          if (isPostgresUniqueViolationOn(error, table)) return undefined;
          throw error;
        }
      },
    };
  }

  /**
   * On PostgreSQL, many plants of one owner inserted as `insertThen` inserts
   * one, with a follow-up that reads from the CTE `created` one row per
   * inserted plant: its owner and its values of `perPlant`. The plants and
   * those values go in as arrays (`unnest`), so one text serves any number of
   * plants; the follow-up's other names take the first plant's values. A
   * taken id inserts nothing (ON CONFLICT DO NOTHING) and fails no other
   * plant; the ids inserted come back. The rows go in in the order of their
   * ids: two such statements of one owner that meet (two instances) take
   * their keys' locks in the same order and cannot deadlock. Undefined on
   * SQLite.
   */
  insertManyThen<Slot extends string, Each extends string>(followUp: {
    sql: string;
    names: readonly Slot[];
    perPlant: readonly Each[];
  }): InsertManyThen<Slot | Each> | undefined {
    const connection = this.plants.manager.connection;
    if (connection.options.type !== 'postgres') return undefined;
    const columns = followUp.perPlant.map((name) => `"${name}"`);
    const statement = CompiledQuery.fromSql(
      connection,
      `WITH "input" AS (
         SELECT * FROM unnest(CAST(:ids AS bigint[]), CAST(:names AS text[]), CAST(:tags AS text[])${followUp.perPlant.map((name) => `, CAST(:${name} AS text[])`).join('')})
           AS "i" ("id", "name", "tag"${columns.map((column) => `, ${column}`).join('')})
       ), "inserted" AS (
         INSERT INTO "plants" ("owner", "id", "name", "tag")
         SELECT :owner, "id", "name", "tag" FROM "input" ORDER BY "id"
         ON CONFLICT DO NOTHING
         RETURNING "owner", "id"
       ), "created" AS (
         SELECT "n"."owner"${columns.map((column) => `, "i".${column}`).join('')}
         FROM "inserted" "n" JOIN "input" "i" ON "i"."id" = "n"."id"
       ), "followed" AS (
         ${followUp.sql}
         RETURNING 1
       )
       SELECT CAST("id" AS TEXT) AS "id", (SELECT count(*) FROM "followed") AS "followed"
       FROM "inserted"`,
      ['owner', 'ids', 'names', 'tags', ...followUp.names, ...followUp.perPlant],
    );
    return {
      sql: statement.sql,
      run: async (manager, owner, plants, values, scope) => {
        const ids = plants.map((plant) => plant.id);
        // A repeated id would insert once and still join each of its rows to
        // the follow-up (an event for a plant that was not written).
        if (new Set(ids).size !== ids.length) throw new Error('insertManyThen: an id is repeated');
        const arrays = followUp.perPlant.map((name) => [name, values.map((one) => one[name])]);
        const perPlant = Object.fromEntries(arrays) as Record<Each, unknown[]>;
        const rows = await statement.rows<{ id: string; followed: string }>(
          manager,
          {
            ...values[0],
            ...perPlant,
            owner,
            ids,
            names: plants.map((plant) => plant.name),
            tags: plants.map((plant) => plant.tag),
          },
          scope,
        );
        return {
          inserted: new Set(rows.map((row) => row.id)),
          followed: rows.length === 0 ? 0 : Number(rows[0].followed),
        };
      },
    };
  }

  async findOne(owner: string, id: bigint, scope: RequestScope): Promise<StoredPlant | undefined> {
    const values = { owner, id };
    const [plant] = await this.findOneById.rows<StoredPlant>(this.plants.manager, values, scope);
    return plant;
  }

  /** One page of the owner's plants in ascending id order, after `afterId` when given (keyset paging). */
  page(
    owner: string,
    size: number,
    afterId: string | undefined,
    scope: RequestScope,
  ): Promise<StoredPlant[]> {
    if (size === 0) return Promise.resolve([]);
    if (afterId === undefined) {
      const query = cached(this.firstPage, size, () =>
        this.stored().where('p.owner = :owner', slots('owner')).orderBy('p.id').limit(size),
      );
      return query.rows<StoredPlant>(this.plants.manager, { owner }, scope);
    }
    const query = cached(this.pageAfter, size, () =>
      this.stored()
        .where('p.owner = :owner AND p.id > :after', slots('owner', 'after'))
        .orderBy('p.id')
        .limit(size),
    );
    return query.rows<StoredPlant>(this.plants.manager, { owner, after: BigInt(afterId) }, scope);
  }

  /**
   * Where a page of `size` plants after `afterId` ends, for a page too long to
   * read in one query: the id of its last plant, and whether any plant
   * follows it (undefined when the page is not full). An index-only walk of
   * the (owner, id) key, no row is read.
   */
  async pageEnd(
    owner: string,
    size: number,
    afterId: string | undefined,
    scope: RequestScope,
  ): Promise<{ lastId: string; more: boolean } | undefined> {
    const skip = size - 1;
    const ids =
      afterId === undefined
        ? await this.lastOfFirst.rows<{ id: string }>(this.plants.manager, { owner, skip }, scope)
        : await this.lastOfPageAfter.rows<{ id: string }>(
            this.plants.manager,
            { owner, after: BigInt(afterId), skip },
            scope,
          );
    return ids.length === 0 ? undefined : { lastId: ids[0].id, more: ids.length > 1 };
  }

  /** Deletes the owner's plant on `manager`; false when the owner has no plant with that id. */
  async delete(
    manager: EntityManager,
    owner: string,
    id: bigint,
    scope: RequestScope,
  ): Promise<boolean> {
    return (await this.deleteOne.affected(manager, { owner, id }, scope)) > 0;
  }
}

function cached<K, Name extends string>(
  queries: Map<K, CompiledQuery<Name>>,
  key: K,
  builder: () => SelectQueryBuilder<Plant>,
): CompiledQuery<Name> {
  let query = queries.get(key);
  if (!query) {
    query = CompiledQuery.build<Name>(builder());
    queries.set(key, query);
  }
  return query;
}
