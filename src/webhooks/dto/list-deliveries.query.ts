import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';
import { queryParameters } from '../../validation/query-parameters.js';

export const DELIVERIES_LIMIT_MAX = 1000;
export const DELIVERIES_LIMIT_DEFAULT = 100;
export const DELIVERIES_LIMIT_RULE = `limit must be an integer from 1 to ${DELIVERIES_LIMIT_MAX}`;

/**
 * Reads the query of GET /webhooks/{id}/deliveries: `limit` is plain decimal
 * digits from 1 to 1000 (default 100); any other parameter is a 400 that
 * names it.
 */
@Injectable()
export class ParseListDeliveriesQueryPipe implements PipeTransform<unknown, number> {
  transform(query: unknown): number {
    const { limit } = queryParameters(query, 'limit');
    if (limit === undefined) return DELIVERIES_LIMIT_DEFAULT;
    if (typeof limit === 'string' && /^\d{1,4}$/.test(limit)) {
      const value = Number(limit);
      if (value >= 1 && value <= DELIVERIES_LIMIT_MAX) return value;
    }
    throw new BadRequestException(DELIVERIES_LIMIT_RULE);
  }
}
