import { ApiQuery, type HeaderObject } from '@nestjs/swagger';
import type { LimitRange } from '../validation/query-parameters.js';

/** The Link response header of a list that pages by keyset (src/http/page-cursor.ts). */
export const NEXT_LINK_HEADER: Record<string, HeaderObject> = {
  Link: {
    description:
      'RFC 8288: `<path?limit=N&after=<cursor>>; rel="next"`, a path relative to the service, present while items remain after this page',
    required: false,
    schema: { type: 'string' },
  },
};

/**
 * The `after` query parameter of such a list. No example: Swagger UI would
 * pre-fill it in "Try it out", and a cursor is only ever one a next link gave.
 */
export const ApiAfterQuery = (): MethodDecorator =>
  ApiQuery({
    name: 'after',
    required: false,
    description:
      'An opaque cursor, taken from the next link of the previous page: only the items after it. Without limit, all of them. A cursor that is not one the service gave for this list is a 400',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
  });

/** The `limit` query parameter of such a list: an int32 in the list's own range. */
export const ApiLimitQuery = (
  range: LimitRange,
  description: string,
  example?: number,
): MethodDecorator =>
  ApiQuery({
    name: 'limit',
    required: false,
    description,
    schema: {
      type: 'integer',
      format: 'int32',
      minimum: range.min,
      maximum: range.max,
      ...(example !== undefined && { example }),
    },
  });
