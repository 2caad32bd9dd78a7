import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { CURSOR_RULE, nextLink, PageCursors } from './page-cursor.js';

const SECRET = 'a-cursor-secret-of-at-least-32-bytes!';
const cursors = new PageCursors(SECRET);
/** Any text back as it is: the tag's checks alone. */
const asIs = (position: string) => position;
const refused = new BadRequestException(CURSOR_RULE);

describe('page cursors', () => {
  it('give back the position they were made with, for their own list only', () => {
    for (const position of ['-9223372036854775808', '0', '1767225600000 msg_0123']) {
      const cursor = cursors.encode('plants', position);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(cursors.decode('plants', cursor, asIs)).toBe(position);
      expect(() => cursors.decode('webhooks', cursor, asIs)).toThrow(refused);
      expect(() => cursors.decode('deliveries', cursor, asIs)).toThrow(refused);
    }
  });

  it('are read by every instance with the same secret, and by none with another', () => {
    const cursor = cursors.encode('plants', '42');
    expect(new PageCursors(SECRET).decode('plants', cursor, asIs)).toBe('42');
    const other = new PageCursors(`${SECRET}?`).encode('plants', '42');
    expect(other).not.toBe(cursor);
    expect(() => cursors.decode('plants', other, asIs)).toThrow(refused);
  });

  it('refuse a keyed cursor whose position is not of the list form, and never hand its bytes on', () => {
    const seen: string[] = [];
    const digits = (position: string) => {
      seen.push(position);
      return /^[0-9]+$/.test(position) ? position : undefined;
    };
    for (const position of ['1\u00002', '1.5', '', ' 1', 'é', '1\n']) {
      expect(() => cursors.decode('plants', cursors.encode('plants', position), digits)).toThrow(
        refused,
      );
    }
    // A byte that is not ASCII reaches the form as one character of its own, never as U+FFFD.
    expect(seen).toContain('\u00c3\u00a9');
    expect(cursors.decode('plants', cursors.encode('plants', '12'), digits)).toBe('12');
  });

  it('refuse every changed, cut or extended cursor, and what is not a string', () => {
    const cursor = cursors.encode('deliveries', '42');
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
      cursors.encode('deliveries', 'x'.repeat(300)),
    ]) {
      expect(() => cursors.decode('deliveries', bad, asIs), String(bad)).toThrow(refused);
    }
  });

  it('write an RFC 8288 next link relative to the service', () => {
    expect(nextLink('/plants', 20, 'abc')).toBe('</plants?limit=20&after=abc>; rel="next"');
  });
});
