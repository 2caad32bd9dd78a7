import { Injectable, type PipeTransform } from '@nestjs/common';
import { type PageQuery, readPageQuery } from './page.query.js';

/**
 * Reads the query of GET /webhooks: `limit` from 0 to 1000 (without it, all
 * subscriptions), `after` a cursor of that list's next link.
 */
@Injectable()
export class ParseListWebhooksQueryPipe implements PipeTransform<unknown, PageQuery> {
  transform(query: unknown): PageQuery {
    return readPageQuery(query, 'webhooks', { min: 0 });
  }
}
