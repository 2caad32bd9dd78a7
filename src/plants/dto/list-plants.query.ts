import { Injectable, type PipeTransform } from '@nestjs/common';
import { PageCursors } from '../../http/page-cursor.js';
import { isInt64 } from '../../validation/int64.js';
import {
  type LimitRange,
  limitRule,
  parseLimit,
  queryParameters,
} from '../../validation/query-parameters.js';

/** `limit` of GET /plants: int32, any count a client may ask for. */
export const PLANTS_LIMIT: LimitRange = { min: 0, max: 2_147_483_647 };
export const LIMIT_RULE = limitRule(PLANTS_LIMIT);

/** The query of GET /plants, as read by ParseListPlantsQueryPipe. */
export interface ListPlantsQuery {
  /** At most this many plants; without it, all of them. */
  limit?: number;
  /** Only plants with a greater id: the position a next link's cursor holds. */
  after?: bigint;
}

/**
 * Reads the query of GET /plants: `limit` is plain decimal digits in
 * PLANTS_LIMIT ("1.5", "-1", "1e3", "" and a repeated limit fail), `after` a
 * cursor of a plants next link holding an int64 id, and any other parameter
 * is a 400 that names it, so that a typo never lists everything.
 *
 * A parse pipe, as Nest's ParseIntPipe is, rather than a class-validator DTO:
 * for one integer, class-transformer and class-validator cost about a tenth of
 * a list request's CPU time (BENCHMARKS.md's git history). Request bodies stay
 * DTOs.
 */
@Injectable()
export class ParseListPlantsQueryPipe implements PipeTransform<unknown, ListPlantsQuery> {
  constructor(private readonly cursors: PageCursors) {}

  transform(query: unknown): ListPlantsQuery {
    const { limit, after } = queryParameters(query, 'limit', 'after');
    return {
      ...(limit !== undefined && { limit: parseLimit(limit, PLANTS_LIMIT) }),
      ...(after !== undefined && { after: this.cursors.decode('plants', after, readPlantId) }),
    };
  }
}

/** A plants cursor's position: an int64 id, as the database writes one (no sign on 0, no leading zero). */
function readPlantId(position: string): bigint | undefined {
  if (!/^(0|-?[1-9][0-9]{0,18})$/.test(position)) return undefined;
  const id = BigInt(position);
  return isInt64(id) ? id : undefined;
}
