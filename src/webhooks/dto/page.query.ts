import type { FastifyReply } from 'fastify';
import { type CursorList, nextLink, type PageCursors } from '../../http/page-cursor.js';
import { type LimitRange, parseLimit, queryParameters } from '../../validation/query-parameters.js';

/** The most items a page of a webhook list holds. */
export const PAGE_LIMIT_MAX = 1000;

/**
 * Where a page of a webhook list goes on from: the sort key of the last item
 * it showed (created_at in Unix milliseconds, then id, which breaks ties).
 */
export interface PagePosition {
  createdAt: number;
  id: string;
}

/** A page of a webhook list: at most `limit` items, after `after` when given. */
export interface PageQuery {
  limit?: number;
  after?: PagePosition;
}

type WebhookList = Extract<CursorList, 'webhooks' | 'deliveries'>;

/** Unix milliseconds, as the database gives them back. */
const MILLIS = '(0|[1-9][0-9]{0,14})';

/**
 * A keyset position, `<created_at> <id>`, with the ids the rows really have:
 * a UUID the service made, an event id the database made.
 */
const POSITION: Record<WebhookList, RegExp> = {
  webhooks: new RegExp(
    `^${MILLIS} ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`,
  ),
  deliveries: new RegExp(`^${MILLIS} (msg_[0-9a-f]{32})$`),
};

/** A cursor's position, when it has exactly the form of `list`'s keyset positions. */
function readPosition(list: WebhookList, position: string): PagePosition | undefined {
  const match = POSITION[list].exec(position);
  return match ? { createdAt: Number(match[1]), id: match[2] } : undefined;
}

/**
 * Reads `limit` (plain digits in `range`, else `fallback`) and `after` (a
 * cursor of `list`'s next link) from a query; any other parameter is a 400
 * that names it.
 */
export function readPageQuery(
  query: unknown,
  list: WebhookList,
  cursors: PageCursors,
  { range, fallback }: { range: LimitRange; fallback?: number },
): PageQuery {
  const { limit, after } = queryParameters(query, 'limit', 'after');
  const page: PageQuery = {};
  if (limit !== undefined) {
    page.limit = parseLimit(limit, range);
  } else if (fallback !== undefined) {
    page.limit = fallback;
  }
  if (after !== undefined) {
    page.after = cursors.decode(list, after, (position) => readPosition(list, position));
  }
  return page;
}

/**
 * Sends the Link header of a page of `list` at `path` when a next page follows
 * (`next`, the last item shown); none after the last page, nor without a
 * limit (then the page holds every item).
 */
export function linkNextPage(
  reply: FastifyReply,
  cursors: PageCursors,
  path: string,
  list: WebhookList,
  page: { limit?: number; next?: PagePosition },
): void {
  if (page.next && page.limit !== undefined) {
    const cursor = cursors.encode(list, `${page.next.createdAt} ${page.next.id}`);
    void reply.header('Link', nextLink(path, page.limit, cursor));
  }
}
