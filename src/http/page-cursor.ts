import {
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  timingSafeEqual,
} from 'node:crypto';
import { BadRequestException } from '@nestjs/common';

/** Which list a cursor belongs to: a cursor of one list is refused by every other. */
export type CursorList = 'plants' | 'webhooks' | 'deliveries';

const KIND: Record<CursorList, number> = { plants: 0x70, webhooks: 0x77, deliveries: 0x64 };

/** 96 bits: guessing a tag takes 2^95 requests on average. */
const MAC_BYTES = 12;

/** Far above the longest cursor the service makes (under 100 characters): reading stops there. */
const MAX_CURSOR_LENGTH = 200;

/** The HKDF label of the cursor key: the secret keys nothing else under the same bytes. */
const KEY_INFO = 'plant-store page cursor v1';

export const CURSOR_RULE = 'after must be a cursor taken from a next link of this list';

const refused = () => new BadRequestException(CURSOR_RULE);

/**
 * Opaque keyset cursors: base64url of the list's kind, the position (the
 * last key the page showed, as text) and an HMAC-SHA256 of both, truncated,
 * under a key derived from a secret that every instance shares. Only the
 * service makes cursors it takes back, so a next link works on any instance
 * and a cursor that is cut, changed, made up or taken from another list is a
 * 400. The owner never comes from a cursor (always from the token).
 *
 * The tag proves who made a cursor, not what it holds: every reader also
 * checks that the position has its list's exact form, so that no cursor,
 * keyed or not, takes any other value (a NUL byte, a number out of range) to
 * the database.
 */
export class PageCursors {
  /**
   * A KeyObject, not the key's bytes: Node 24 turns bytes given to createHmac
   * into a key object on every call, some 10 µs (BENCHMARKS.md, "Where a
   * list's time goes").
   */
  private readonly key: KeyObject;

  constructor(secret: string | Buffer) {
    this.key = createSecretKey(
      Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), KEY_INFO, 32)),
    );
  }

  private tag(body: Buffer): Buffer {
    return createHmac('sha256', this.key).update(body).digest().subarray(0, MAC_BYTES);
  }

  /** The cursor of `list` that goes on after `position`. */
  encode(list: CursorList, position: string): string {
    const body = Buffer.concat([Buffer.of(KIND[list]), Buffer.from(position, 'utf8')]);
    return Buffer.concat([body, this.tag(body)]).toString('base64url');
  }

  /**
   * The position a cursor of `list` holds, as `read` parses it (undefined: not
   * of the list's form); a 400 for anything else, never an exception of
   * another kind.
   */
  decode<T>(list: CursorList, cursor: unknown, read: (position: string) => T | undefined): T {
    if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_LENGTH) throw refused();
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw refused();
    const bytes = Buffer.from(cursor, 'base64url');
    // Only the canonical spelling: no other text decodes to the same cursor.
    if (bytes.length <= MAC_BYTES + 1 || bytes.toString('base64url') !== cursor) throw refused();
    const body = bytes.subarray(0, bytes.length - MAC_BYTES);
    if (body[0] !== KIND[list] || !timingSafeEqual(this.tag(body), bytes.subarray(body.length))) {
      throw refused();
    }
    // One character per byte: positions are ASCII, and any other byte fails every list's form.
    const position = read(body.subarray(1).toString('latin1'));
    if (position === undefined) throw refused();
    return position;
  }
}

/**
 * The RFC 8288 Link header of a page that has a next one: a path relative to
 * the service, with the page's limit and the cursor after its last item.
 */
export function nextLink(path: string, limit: number, cursor: string): string {
  return `<${path}?limit=${limit}&after=${cursor}>; rel="next"`;
}
