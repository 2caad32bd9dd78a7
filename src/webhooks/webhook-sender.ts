import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { HostResolver, ResolvedAddress } from './host-resolver.js';
import { isPublicAddress } from './public-address.js';
import { signatureHeader } from './webhook-signature.js';
import { hostOf } from './webhook-url.js';

export interface SenderOptions {
  timeoutMs: number;
  allowHttp: boolean;
  allowPrivateTargets: boolean;
}

export interface OutgoingEvent {
  url: string;
  /** Newest first: each signs the event (two during a rotation's overlap). */
  secrets: string[];
  eventId: string;
  body: string;
}

/** What came of one attempt: the receiver's status, or why there was none. */
export type AttemptResult =
  { status: number; excerpt: string; retryAfter?: string } | { status?: undefined; error: string };

/** What the receiver answered: its status, an excerpt, and the back-off it asks for. */
type ReceiverAnswer = { status: number; excerpt: string; retryAfter?: string };

/** Bytes of a receiver's answer read at most; the rest is discarded unread. */
const EXCERPT_BYTES = 512;
/** Characters of a receiver's answer kept, printable ASCII only. */
const EXCERPT_CHARS = 200;

/** A short, printable excerpt of a receiver's answer: never stored whole, never raw. */
function sanitiseExcerpt(text: string): string {
  return text
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim()
    .slice(0, EXCERPT_CHARS);
}

class RefusedTarget extends Error {}

/**
 * Sends one signed event, guarded against server-side request forgery: the
 * host is resolved here, every address it resolves to is checked, and the
 * request connects to the checked address (with the URL's Host header and
 * TLS server name), so a second DNS answer cannot point elsewhere (DNS
 * rebinding).
 */
export class WebhookSender {
  constructor(
    private readonly options: SenderOptions,
    private readonly resolver: HostResolver,
  ) {}

  /** `stop`: aborts the attempt (shutdown); the result is then an error. */
  async send(event: OutgoingEvent, stop?: AbortSignal): Promise<AttemptResult> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = stop ? AbortSignal.any([timeout, stop]) : timeout;
    try {
      const url = new URL(event.url);
      const address = await this.checkedAddress(url, signal);
      const timestamp = Math.floor(Date.now() / 1000);
      const response = await this.post(url, address, event, timestamp, signal);
      return response;
    } catch (error) {
      if (error instanceof RefusedTarget) return { error: `refused: ${error.message}` };
      if (timeout.aborted) return { error: `no answer within ${this.options.timeoutMs} ms` };
      if (signal.aborted) return { error: 'stopped' };
      const code = (error as { code?: unknown }).code;
      return { error: typeof code === 'string' ? `request failed: ${code}` : 'request failed' };
    }
  }

  private async checkedAddress(url: URL, signal: AbortSignal): Promise<ResolvedAddress> {
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.options.allowHttp)) {
      throw new RefusedTarget(`${url.protocol} URLs are not allowed`);
    }
    const host = hostOf(url);
    const family = isIP(host);
    const addresses =
      family !== 0
        ? [{ address: host, family }]
        : await untilAborted(this.resolver.resolve(host), signal);
    if (addresses.length === 0) throw new RefusedTarget(`${host} does not resolve`);
    if (!this.options.allowPrivateTargets) {
      // Never the address itself: the delivery list would show the owner where
      // an internal name points.
      if (addresses.some(({ address }) => !isPublicAddress(address))) {
        throw new RefusedTarget('target address not allowed');
      }
    }
    return addresses[0];
  }

  private post(
    url: URL,
    target: ResolvedAddress,
    event: OutgoingEvent,
    timestamp: number,
    signal: AbortSignal,
  ): Promise<ReceiverAnswer> {
    const hostname = hostOf(url);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const request = send(
        {
          host: target.address,
          family: target.family,
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          // The certificate is checked against the URL's host, not the address.
          servername: isIP(hostname) === 0 ? hostname : undefined,
          agent: false,
          signal,
          headers: {
            host: url.host,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(event.body),
            'user-agent': 'plant-store-webhooks/1.0',
            'webhook-id': event.eventId,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signatureHeader(
              event.secrets,
              event.eventId,
              timestamp,
              event.body,
            ),
          },
        },
        (response) => {
          readExcerpt(response).then(resolve, reject);
        },
      );
      request.on('error', reject);
      request.end(event.body);
    });
  }
}

/**
 * `work`'s outcome, or `signal`'s reason as soon as it aborts: the attempt's
 * timeout covers the host's resolution too. getaddrinfo itself cannot be
 * stopped; it finishes in libuv's thread pool and its answer is dropped.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const aborted = () => reject(signal.reason as Error);
    signal.addEventListener('abort', aborted, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', aborted);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', aborted);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

function readExcerpt(response: IncomingMessage): Promise<ReceiverAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      const text = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
      const status = response.statusCode ?? 0;
      // Only where HTTP gives it a meaning for a retry (Too Many Requests, Service Unavailable).
      const retryAfter =
        status === 429 || status === 503 ? response.headers['retry-after'] : undefined;
      resolve({ status, excerpt: sanitiseExcerpt(text), retryAfter });
    };
    response.on('data', (chunk: Buffer) => {
      if (size >= EXCERPT_BYTES) return;
      chunks.push(chunk);
      size += chunk.length;
      if (size >= EXCERPT_BYTES) {
        done();
        response.destroy();
      }
    });
    response.on('end', done);
    response.on('error', reject);
  });
}
