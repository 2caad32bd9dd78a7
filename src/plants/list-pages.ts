import { nextMacrotask } from '../database/next-macrotask.js';
import { PlantDto } from './dto/plant.dto.js';
import type { PlantRow, StoredPlant } from './plants.repository.js';

/*
 * How a list is cut into pages: one query for a limit up to LIST_PAGE_SIZE,
 * otherwise a first page and then pages of about 64 KiB, read lazily while
 * the answer is written (PlantsService.list decides which).
 */

/** The most rows read per query: a limit up to this is answered from one query. */
export const LIST_PAGE_SIZE = 1000;

/**
 * A streamed list's pages: the first of FIRST_STREAMED_PAGE rows, each later
 * one of as many rows as fill about PAGE_BYTES at the size of the rows read so
 * far (a power of two, at most LIST_PAGE_SIZE). So a page of 255-character
 * plants is some 64 rows, not 1,000 (about 1 MB), and the memory a list holds
 * for a client that does not read stays small.
 */
export const FIRST_STREAMED_PAGE = 256;
const PAGE_BYTES = 64 * 1024;

export const toDto = (plant: PlantRow): PlantDto => new PlantDto(plant.name, plant.tag);

/** Rows of about PAGE_BYTES, judged by `rows` (their JSON's size, near enough). */
export function rowsPerPage(rows: readonly PlantRow[]): number {
  let bytes = 0;
  for (const row of rows) bytes += 24 + row.name.length + (row.tag?.length ?? 0);
  const fit = Math.max(1, Math.floor((PAGE_BYTES * rows.length) / Math.max(1, bytes)));
  return Math.min(LIST_PAGE_SIZE, Math.max(16, 2 ** Math.floor(Math.log2(fit))));
}

/**
 * A list small enough to come back in one query is returned whole; a longer
 * one is returned as its first page plus the pages that follow, read lazily
 * while the response is written. `next` is the id of the last plant of a
 * limited page that more plants follow: the position its next link goes on from.
 */
export type PlantList = (
  | { complete: true; plants: PlantDto[] }
  | { complete: false; plants: PlantDto[]; rest: AsyncIterable<PlantDto[]> }
) & { next?: string };

/** The rows with an id up to `through` (all when undefined); rows come in ascending id order. */
export function upTo(rows: StoredPlant[], through: bigint | undefined): StoredPlant[] {
  if (through === undefined || rows.length === 0 || BigInt(rows[rows.length - 1].id) <= through) {
    return rows;
  }
  return rows.filter((row) => BigInt(row.id) <= through);
}

/**
 * The pages that `read` gives after `previous`, no further than the id
 * `through` when given (a limited page's end), else to the owner's last
 * plant: a plant created inside the page while it streams is sent, and none
 * is skipped.
 * Before each page the event loop serves whatever else waits: on SQLite a
 * page is read synchronously, and a long list must not hold the process
 * while other requests (other owners') wait.
 */
export async function* pagesAfter(
  read: (size: number, after: string) => Promise<StoredPlant[]>,
  previous: StoredPlant[],
  through: bigint | undefined,
): AsyncGenerator<PlantDto[]> {
  let last = previous[previous.length - 1].id;
  let size = rowsPerPage(previous);
  for (;;) {
    await nextMacrotask();
    const page = await read(size, last);
    const kept = upTo(page, through);
    if (kept.length > 0) yield kept.map(toDto);
    if (kept.length < size) return;
    last = page[page.length - 1].id;
    size = rowsPerPage(page);
  }
}
