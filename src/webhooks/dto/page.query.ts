import { BadRequestException } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import {
  CURSOR_RULE,
  type CursorList,
  decodeCursor,
  encodeCursor,
  nextLink,
} from '../../http/page-cursor.js';
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

/**
 * Reads `limit` (plain digits in `range`, else `fallback`) and `after` (a
 * cursor of `list`'s next link) from a query; any other parameter is a 400
 * that names it.
 */
export function readPageQuery(
  query: unknown,
  list: CursorList,
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
    const match = /^(\d{1,15}) (.{1,64})$/.exec(decodeCursor(list, after));
    if (!match) throw new BadRequestException(CURSOR_RULE);
    page.after = { createdAt: Number(match[1]), id: match[2] };
  }
  return page;
}

/** The cursor that goes on after `item`. */
const cursorAfter = (list: CursorList, item: PagePosition): string =>
  encodeCursor(list, `${item.createdAt} ${item.id}`);

/**
 * Sends the Link header of a page of `list` at `path` when a next page follows
 * (`next`, the last item shown); none after the last page, nor without a
 * limit (then the page holds every item).
 */
export function linkNextPage(
  reply: FastifyReply,
  path: string,
  list: CursorList,
  page: { limit?: number; next?: PagePosition },
): void {
  if (page.next && page.limit !== undefined) {
    void reply.header('Link', nextLink(path, page.limit, cursorAfter(list, page.next)));
  }
}
