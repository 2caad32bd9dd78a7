import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { CURSOR_RULE, PageCursors } from '../../http/page-cursor.js';
import { readPageQuery } from './page.query.js';

const cursors = new PageCursors('a-cursor-secret-of-at-least-32-bytes!');
const range = { range: { min: 0, max: 1000 } };
const SUBSCRIPTION = '0b9e3c1a-5d2f-4e6a-8b7c-9d0e1f2a3b4c';
const EVENT = 'msg_0123456789abcdef0123456789abcdef';

describe('readPageQuery', () => {
  it('reads after as the created_at and id of each list own rows', () => {
    for (const [list, id] of [
      ['webhooks', SUBSCRIPTION],
      ['deliveries', EVENT],
    ] as const) {
      for (const createdAt of [0, 1767225600000, 999_999_999_999_999]) {
        const query = { after: cursors.encode(list, `${createdAt} ${id}`) };
        expect(readPageQuery(query, list, cursors, range)).toEqual({ after: { createdAt, id } });
      }
    }
  });

  it('answers 400 for a keyed cursor whose position is not of its list form', () => {
    for (const [list, id, other] of [
      ['webhooks', SUBSCRIPTION, EVENT],
      ['deliveries', EVENT, SUBSCRIPTION],
    ] as const) {
      for (const position of [
        `1 ${other}`,
        `1 ${id}\u0000`,
        `1 ${id.slice(0, -1)}\u0000`,
        `1 ${id.toUpperCase().replace('MSG_', 'msg_')}`,
        `1  ${id}`,
        `01 ${id}`,
        `-1 ${id}`,
        `1.5 ${id}`,
        `1000000000000000 ${id}`,
        `1 ${id} `,
        `1`,
        `${id}`,
        '',
      ]) {
        const query = { after: cursors.encode(list, position) };
        expect(() => readPageQuery(query, list, cursors, range), JSON.stringify(position)).toThrow(
          new BadRequestException(CURSOR_RULE),
        );
      }
    }
  });
});
