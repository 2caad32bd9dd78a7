import { Injectable, type PipeTransform } from '@nestjs/common';
import { PageCursors } from '../../http/page-cursor.js';
import { type LimitRange } from '../../validation/query-parameters.js';
import { type PageQuery, PAGE_LIMIT_MAX, readPageQuery } from './page.query.js';

/** `limit` of GET /webhooks/{id}/deliveries: at least one, since it has a default. */
export const DELIVERIES_LIMIT: LimitRange = { min: 1, max: PAGE_LIMIT_MAX };
export const DELIVERIES_LIMIT_DEFAULT = 100;

/**
 * Reads the query of GET /webhooks/{id}/deliveries: `limit` is plain decimal
 * digits from 1 to 1000 (default 100), `after` a cursor of that list's next
 * link; any other parameter is a 400 that names it.
 */
@Injectable()
export class ParseListDeliveriesQueryPipe implements PipeTransform<unknown, PageQuery> {
  constructor(private readonly cursors: PageCursors) {}

  transform(query: unknown): PageQuery {
    return readPageQuery(query, 'deliveries', this.cursors, {
      range: DELIVERIES_LIMIT,
      fallback: DELIVERIES_LIMIT_DEFAULT,
    });
  }
}
