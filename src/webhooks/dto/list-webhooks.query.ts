import { Injectable, type PipeTransform } from '@nestjs/common';
import { PageCursors } from '../../http/page-cursor.js';
import { type LimitRange } from '../../validation/query-parameters.js';
import { type PageQuery, PAGE_LIMIT_MAX, readPageQuery } from './page.query.js';

/** `limit` of GET /webhooks; without it, every subscription. */
export const WEBHOOKS_LIMIT: LimitRange = { min: 0, max: PAGE_LIMIT_MAX };

/**
 * Reads the query of GET /webhooks: `limit` from 0 to 1000 (without it, all
 * subscriptions), `after` a cursor of that list's next link.
 */
@Injectable()
export class ParseListWebhooksQueryPipe implements PipeTransform<unknown, PageQuery> {
  constructor(private readonly cursors: PageCursors) {}

  transform(query: unknown): PageQuery {
    return readPageQuery(query, 'webhooks', this.cursors, { range: WEBHOOKS_LIMIT });
  }
}
