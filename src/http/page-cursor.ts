import { createHash } from 'node:crypto';
import { BadRequestException } from '@nestjs/common';

/** Which list a cursor belongs to: a cursor of one list is refused by every other. */
export type CursorList = 'plants' | 'webhooks' | 'deliveries';

const KIND: Record<CursorList, number> = { plants: 0x70, webhooks: 0x77, deliveries: 0x64 };
const CHECK_BYTES = 4;

export const CURSOR_RULE = 'after must be a cursor taken from a next link of this list';

const checksum = (body: Buffer) =>
  createHash('sha256').update(body).digest().subarray(0, CHECK_BYTES);

/**
 * An opaque keyset cursor: base64url of the list's kind, the position (the
 * last key the page showed, as text) and a short checksum. The checksum is no
 * secret and proves nothing about who made the cursor (the owner always comes
 * from the token, never from here); it makes a cut or mistyped cursor a 400
 * instead of a silent jump to another position.
 */
export function encodeCursor(list: CursorList, position: string): string {
  const body = Buffer.concat([Buffer.of(KIND[list]), Buffer.from(position, 'utf8')]);
  return Buffer.concat([body, checksum(body)]).toString('base64url');
}

/** The position a cursor of `list` holds; a 400 for anything else. */
export function decodeCursor(list: CursorList, cursor: unknown): string {
  if (typeof cursor === 'string' && /^[A-Za-z0-9_-]{1,200}$/.test(cursor)) {
    const bytes = Buffer.from(cursor, 'base64url');
    // Only the canonical spelling: no other text decodes to the same cursor.
    if (bytes.length > CHECK_BYTES + 1 && bytes.toString('base64url') === cursor) {
      const body = bytes.subarray(0, bytes.length - CHECK_BYTES);
      if (body[0] === KIND[list] && checksum(body).equals(bytes.subarray(body.length))) {
        return body.subarray(1).toString('utf8');
      }
    }
  }
  throw new BadRequestException(CURSOR_RULE);
}

/**
 * The RFC 8288 Link header of a page that has a next one: a path relative to
 * the service, with the page's limit and the cursor after its last item.
 */
export function nextLink(path: string, limit: number, cursor: string): string {
  return `<${path}?limit=${limit}&after=${cursor}>; rel="next"`;
}
