import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { CURSOR_RULE, PageCursors } from '../../http/page-cursor.js';
import { LIMIT_RULE, ParseListPlantsQueryPipe, PLANTS_LIMIT } from './list-plants.query.js';

const LIMIT_MAX = PLANTS_LIMIT.max;

const cursors = new PageCursors('a-cursor-secret-of-at-least-32-bytes!');
const pipe = new ParseListPlantsQueryPipe(cursors);
const after = (position: string) => ({ after: cursors.encode('plants', position) });

describe('ParseListPlantsQueryPipe', () => {
  it('reads limit from 0 to 2^31-1, and no limit as none', () => {
    expect(LIMIT_RULE).toBe('limit must be an integer from 0 to 2147483647');
    expect(pipe.transform({})).toEqual({});
    expect(pipe.transform(undefined)).toEqual({});
    expect(pipe.transform({ limit: '0' })).toEqual({ limit: 0 });
    expect(pipe.transform({ limit: '20' })).toEqual({ limit: 20 });
    expect(pipe.transform({ limit: String(LIMIT_MAX) })).toEqual({ limit: LIMIT_MAX });
  });

  it('answers 400 for a limit that is not plain digits in range, or repeated', () => {
    for (const limit of [
      'abc',
      '-1',
      '1.5',
      '',
      '1e3',
      ' 1',
      String(LIMIT_MAX + 1),
      '99999999999',
      ['1', '2'],
    ]) {
      expect(() => pipe.transform({ limit }), String(limit)).toThrow(
        new BadRequestException(LIMIT_RULE),
      );
    }
  });

  it('answers 400 naming every unknown parameter, Object.prototype names included', () => {
    expect(() => pipe.transform({ limit: '1', colour: 'green', size: 'L' })).toThrow(
      new BadRequestException('property colour should not exist; property size should not exist'),
    );
    const query: unknown = JSON.parse('{"__proto__": "1"}');
    expect(() => pipe.transform(query)).toThrow(/property __proto__ should not exist/);
  });

  it('reads after as the int64 id its cursor holds', () => {
    for (const id of [-(2n ** 63n), -1n, 0n, 7n, 2n ** 63n - 1n]) {
      expect(pipe.transform(after(String(id)))).toEqual({ after: id });
    }
  });

  it('answers 400 for a keyed cursor whose position is not an int64 as the database writes it', () => {
    for (const position of [
      '',
      '007',
      '-0',
      '+1',
      '1.5',
      '1e3',
      ' 1',
      '1\u0000',
      '9223372036854775808',
      '-9223372036854775809',
      '1'.repeat(40),
      '1767225600000 msg_0123456789abcdef0123456789abcdef',
    ]) {
      expect(() => pipe.transform(after(position)), JSON.stringify(position)).toThrow(
        new BadRequestException(CURSOR_RULE),
      );
    }
  });
});
