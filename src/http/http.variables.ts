import { isIP } from 'node:net';
import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import {
  IntVariable,
  ListVariable,
  OptionalVariable,
  PatternVariable,
  shown,
  toList,
  variableRule,
} from '../config/environment.decorators.js';
import { Variable } from '../config/variable-metadata.js';

/** A key as text: at least 32 bytes of printable ASCII (`openssl rand -base64 48` gives 64). */
const CURSOR_SECRET_PATTERN = /^[\x21-\x7e]{32,512}$/;

/** Fastify's `trustProxy`: off, every hop, a hop count, or the proxies' addresses and CIDRs. */
export type TrustProxy = boolean | number | string[];

const toTrustProxy = ({ value }: { value: unknown }): unknown => {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (['', 'false'].includes(text.toLowerCase())) return false;
  if (text.toLowerCase() === 'true') return true;
  if (/^\d+$/.test(text)) return Number(text);
  return toList({ value: text });
};

const isAddressOrCidr = (item: string): boolean => {
  const [address, prefix, ...rest] = item.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return (
    prefix === undefined ||
    (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
  );
};

/** true, false, a hop count (0-100), or a comma-separated list of addresses and CIDRs. */
const TrustProxyVariable = (): PropertyDecorator =>
  applyDecorators(
    Transform(toTrustProxy),
    variableRule(
      {
        type: 'proxies',
        allowed:
          'true, false, a hop count from 0 to 100, or a comma-separated list of proxy addresses ' +
          'or CIDRs such as 10.0.0.0/8,127.0.0.1',
      },
      (value, args) => {
        if (typeof value === 'boolean') return undefined;
        if (typeof value === 'number')
          return value <= 100 ? undefined : `${shown(args)} is above the maximum 100 hops`;
        if (!Array.isArray(value) || value.length === 0) return `${shown(args)} is not allowed`;
        const bad: unknown = value.find(
          (item) => typeof item !== 'string' || !isAddressOrCidr(item),
        );
        return bad === undefined
          ? undefined
          : `the item ${shown(args, bad)} is not an IP address or CIDR`;
      },
    ),
  );

/**
 * The HTTP server's variables: where it listens, what it accepts, whom it believes, how it keys
 * paging cursors. One part of the service's Environment (src/environment.ts).
 */
export class HttpVariables {
  @Variable('HTTP server', 'TCP port to listen on; 0 picks a free one.')
  @IntVariable(0, 65535)
  PORT = 3000;

  @Variable('HTTP server', 'Address to listen on; `0.0.0.0` or `::` for every interface.')
  @PatternVariable('string', /^[^\s]+$/, 'a host name or address, without spaces')
  HOST = '127.0.0.1';

  @Variable('HTTP server', 'Largest request body accepted, in bytes; a larger one is a 413.')
  @IntVariable(1024, 100 * 1024 * 1024)
  BODY_LIMIT_BYTES = 64 * 1024;

  @Variable('HTTP server', 'Origins allowed by CORS; empty: CORS off.')
  @ListVariable('a comma-separated list of origins such as https://app.example.com', (origin) =>
    /^https?:\/\/[^\s,/]+$/.test(origin),
  )
  CORS_ORIGINS: string[] = [];

  @Variable('HTTP server', 'Time allowed to receive a whole request (headers and body).')
  @IntVariable(100, 600_000)
  HTTP_REQUEST_TIMEOUT_MS = 30_000;

  @Variable('HTTP server', 'A connection with no traffic for this long is closed.')
  @IntVariable(100, 3_600_000)
  HTTP_IDLE_TIMEOUT_MS = 60_000;

  @Variable('HTTP server', 'How long an idle keep-alive connection is kept open.')
  @IntVariable(100, 3_600_000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 5_000;

  @Variable(
    'HTTP server',
    'Which reverse proxies are believed about the client address (X-Forwarded-For), the ' +
      'address the failed-authentication budget and the per-address quota count. Off by ' +
      "default: then every client behind a proxy has the proxy's address.",
  )
  @TrustProxyVariable()
  TRUST_PROXY: TrustProxy = false;

  @Variable(
    'HTTP server',
    'The key of the paging cursors in next links (an HMAC key, derived from this text): every ' +
      'instance behind one address needs the same, and a change makes cursors already given out ' +
      '400s. Required in production when APP_ROLE is all or api; unset elsewhere, each process ' +
      'uses a random key and says so in a warning. Generate one with `openssl rand -base64 48`.',
    { secret: true },
  )
  @OptionalVariable()
  @PatternVariable(
    'string',
    CURSOR_SECRET_PATTERN,
    '32 to 512 printable ASCII characters without spaces (at least 32 bytes)',
  )
  CURSOR_SECRET?: string = undefined;
}
