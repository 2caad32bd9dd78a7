import { Readable } from 'node:stream';

async function* arrayText(
  first: unknown[],
  rest: AsyncIterable<unknown[]>,
): AsyncGenerator<string> {
  let separator = '[';
  for await (const page of (async function* () {
    yield first;
    yield* rest;
  })()) {
    if (page.length === 0) continue;
    yield separator + page.map((item) => JSON.stringify(item)).join(',');
    separator = ',';
  }
  yield separator === '[' ? '[]' : ']';
}

/**
 * A JSON array written page by page: only one page is in memory at a time,
 * and a failure half-way ends the stream with an error (the connection is cut),
 * never with a well-formed but shorter array.
 */
export function jsonArrayStream(first: unknown[], rest: AsyncIterable<unknown[]>): Readable {
  return Readable.from(arrayText(first, rest), { objectMode: false });
}
