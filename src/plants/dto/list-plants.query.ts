import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';
import { onlyParameter } from '../../validation/query-parameters.js';

export const LIMIT_MAX = 2_147_483_647;
export const LIMIT_RULE = `limit must be an integer from 0 to ${LIMIT_MAX}`;

/** The query of GET /plants, as read by ParseListPlantsQueryPipe. */
export interface ListPlantsQuery {
  /** At most this many plants; without it, all of them. */
  limit?: number;
}

/**
 * Reads the query of GET /plants: `limit` is plain decimal digits from 0 to
 * LIMIT_MAX ("1.5", "-1", "1e3", "" and a repeated limit fail), and any other
 * parameter is a 400 that names it, so that a typo never lists everything.
 *
 * A parse pipe, as Nest's ParseIntPipe is, rather than a class-validator DTO:
 * for one integer, class-transformer and class-validator cost about a tenth of
 * a list request's CPU time (BENCHMARKS.md history). Request bodies stay DTOs.
 */
@Injectable()
export class ParseListPlantsQueryPipe implements PipeTransform<unknown, ListPlantsQuery> {
  transform(query: unknown): ListPlantsQuery {
    const limit = onlyParameter(query, 'limit');
    if (limit === undefined) return {};
    if (typeof limit === 'string' && /^\d{1,10}$/.test(limit)) {
      const value = Number(limit);
      if (value <= LIMIT_MAX) return { limit: value };
    }
    throw new BadRequestException(LIMIT_RULE);
  }
}
