import type { Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { EntityManager } from 'typeorm';
import type { DatabaseKind } from '../../src/database/data-source-options.js';

/** What a case drives the app with. */
export interface CaseContext {
  kind: DatabaseKind;
  app: NestFastifyApplication;
  /** The app's own instance of a provider, from whichever module holds it. */
  get<T>(type: Type<T>): T;
  /** The DataSource's manager: a statement on its own, outside any transaction. */
  manager: EntityManager;
  /** Runs `work` with its SQL captured into the case's entry; set-up stays outside. */
  capture(work: () => Promise<unknown>): Promise<void>;
}

/** One entry of a snapshot: a method (or a flow) called so that it runs one shape of SQL. */
interface SqlCase {
  /** The entry's comment: the method, and what this call of it shows. */
  title: string;
  /** Numbers the call writes into the SQL text after LIMIT or OFFSET, by the name they show as. */
  inlined?: Record<string, number>;
  /** The one database whose file shows it, when the other's would repeat another entry. */
  only?: DatabaseKind;
  run(context: CaseContext): Promise<void>;
}

/** A snapshot file per database: `${path}.${kind}.sql`, from the cases in order. */
export interface SqlFeature {
  /** Names the feature in the file's header. */
  title: string;
  /** From the repository's root, without the database and extension. */
  path: string;
  /** The one database it has a file for, when the other runs none of its SQL. */
  only?: DatabaseKind;
  cases: SqlCase[];
}
