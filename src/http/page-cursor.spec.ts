import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { CURSOR_RULE, decodeCursor, encodeCursor, nextLink } from './page-cursor.js';

describe('page cursors', () => {
  it('give back the position they were made with, for their own list only', () => {
    for (const position of [
      '-9223372036854775808',
      '0',
      '9223372036854775807',
      '2026-01-01T00:00:00.000Z|7',
    ]) {
      const cursor = encodeCursor('plants', position);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor('plants', cursor)).toBe(position);
      expect(() => decodeCursor('webhooks', cursor)).toThrow(new BadRequestException(CURSOR_RULE));
    }
  });

  it('refuse every changed, cut or extended cursor, and what is not a string', () => {
    const cursor = encodeCursor('deliveries', '42');
    const changed = [...cursor].map(
      (_, at) => cursor.slice(0, at) + (cursor[at] === 'x' ? 'y' : 'x') + cursor.slice(at + 1),
    );
    for (const bad of [
      ...changed,
      cursor.slice(0, -1),
      cursor.slice(1),
      `${cursor}A`,
      `${cursor}==`,
      '',
      undefined,
      ['a', 'b'],
      'a'.repeat(201),
    ]) {
      expect(() => decodeCursor('deliveries', bad), String(bad)).toThrow(CURSOR_RULE);
    }
  });

  it('write an RFC 8288 next link relative to the service', () => {
    expect(nextLink('/plants', 20, 'abc')).toBe('</plants?limit=20&after=abc>; rel="next"');
  });
});
