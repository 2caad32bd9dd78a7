import { Injectable, type PipeTransform } from '@nestjs/common';
import { type PageQuery, PAGE_LIMIT_MAX, readPageQuery } from './page.query.js';

export const DELIVERIES_LIMIT_MAX = PAGE_LIMIT_MAX;
export const DELIVERIES_LIMIT_DEFAULT = 100;
export const DELIVERIES_LIMIT_RULE = `limit must be an integer from 1 to ${DELIVERIES_LIMIT_MAX}`;

/**
 * Reads the query of GET /webhooks/{id}/deliveries: `limit` is plain decimal
 * digits from 1 to 1000 (default 100), `after` a cursor of that list's next
 * link; any other parameter is a 400 that names it.
 */
@Injectable()
export class ParseListDeliveriesQueryPipe implements PipeTransform<unknown, PageQuery> {
  transform(query: unknown): PageQuery {
    return readPageQuery(query, 'deliveries', { min: 1, fallback: DELIVERIES_LIMIT_DEFAULT });
  }
}
