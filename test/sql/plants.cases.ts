import { RequestScope } from '../../src/database/request-scope.js';
import { PlantsRepository } from '../../src/plants/plants.repository.js';
import { PlantsService } from '../../src/plants/plants.service.js';
import { PlantCreatedOutbox } from '../../src/webhooks/plant-created.outbox.js';
import type { CaseContext, SqlFeature } from './sql-case.js';

const OWNER = 'sql-plants';
const PAGE = 7;
const BACKGROUND = RequestScope.background;

/** The create as PostgreSQL writes it: PlantsRepository.insertThen with the outbox's part. */
export async function createAsOneStatement(
  { get, manager, capture }: CaseContext,
  owner: string,
  id: bigint,
): Promise<void> {
  const plant = { id, name: 'Ivy', tag: 'climber' };
  await capture(async () => {
    const part = get(PlantCreatedOutbox).statementPart('created');
    const statement = get(PlantsRepository).insertThen(part);
    await statement?.run(manager, { owner, ...plant, ...part.values(plant, null) }, BACKGROUND);
  });
}

/** Creates of one owner as PostgreSQL writes them together: PlantsRepository.insertManyThen. */
export async function createManyAsOneStatement(
  { get, manager, capture }: CaseContext,
  owner: string,
  ids: bigint[],
): Promise<void> {
  const plants = ids.map((id) => ({ id, name: `plant ${id}`, tag: null }));
  await capture(async () => {
    const part = get(PlantCreatedOutbox).statementPart('created');
    const statement = get(PlantsRepository).insertManyThen(part.many);
    const values = plants.map((plant) => part.values(plant, null));
    await statement?.run(manager, owner, plants, values, BACKGROUND);
  });
}

export const plantsSql: SqlFeature = {
  title: 'the plants feature (src/plants)',
  path: 'src/plants/sql/plants',
  cases: [
    {
      title:
        'PlantsService.create: a plant with its plant-created events, PlantsRepository.insert and ' +
        'PlantCreatedOutbox.record in one transaction (on PostgreSQL: PlantsRepository.insertThen)',
      only: 'sqlite',
      run: ({ get, capture }) =>
        capture(() =>
          get(PlantsService).create(OWNER, { id: 1n, name: 'Fern', tag: 'shade' }, BACKGROUND),
        ),
    },
    {
      title:
        'PlantsRepository.insert: one plant on the caller’s manager; a taken (owner, id) inserts nothing',
      run: ({ get, manager, capture }) =>
        capture(() => get(PlantsRepository).insert(manager, OWNER, 2n, 'Moss', null)),
    },
    {
      title:
        'PlantsRepository.insertThen: a create as one statement, the insert as a data-modifying CTE ' +
        'and a follow-up (the outbox’s part, PlantCreatedOutbox.statementPart) reading it; a taken ' +
        '(owner, id) fails the statement, writing nothing (PostgreSQL only)',
      run: (context) => createAsOneStatement(context, OWNER, 3n),
    },
    {
      title:
        'PlantsRepository.insertManyThen: creates of one owner written together as one statement, ' +
        'the plants as arrays, a taken id inserting nothing, the follow-up (the outbox’s part, ' +
        'PlantCreatedOutbox.statementPart’s many) reading one row per inserted plant (PostgreSQL only)',
      run: (context) => createManyAsOneStatement(context, OWNER, [3n, 4n, 5n]),
    },
    {
      title: 'PlantsRepository.findOne: the owner’s plant by id',
      run: ({ get, capture }) =>
        capture(() => get(PlantsRepository).findOne(OWNER, 1n, BACKGROUND)),
    },
    {
      title:
        'PlantsRepository.page: the first page; its size is written into the SQL (one text per size)',
      inlined: { size: PAGE },
      run: ({ get, capture }) =>
        capture(() => get(PlantsRepository).page(OWNER, PAGE, undefined, BACKGROUND)),
    },
    {
      title: 'PlantsRepository.page: the page after an id (keyset paging)',
      inlined: { size: PAGE },
      run: ({ get, capture }) =>
        capture(() => get(PlantsRepository).page(OWNER, PAGE, '1', BACKGROUND)),
    },
    {
      title: 'PlantsRepository.pageEnd: where a long first page ends (an index-only walk)',
      run: ({ get, capture }) =>
        capture(() => get(PlantsRepository).pageEnd(OWNER, 500, undefined, BACKGROUND)),
    },
    {
      title: 'PlantsRepository.pageEnd: where a long page after an id ends',
      run: ({ get, capture }) =>
        capture(() => get(PlantsRepository).pageEnd(OWNER, 500, '1', BACKGROUND)),
    },
    {
      title: 'PlantsRepository.delete: the owner’s plant by id, on the caller’s manager',
      run: ({ get, manager, capture }) =>
        capture(() => get(PlantsRepository).delete(manager, OWNER, 2n, BACKGROUND)),
    },
  ],
};
