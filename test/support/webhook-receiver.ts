import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  /** The request's path and query. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The request body, byte for byte (as UTF-8 text). */
  body: string;
  at: number;
}

/** A status with headers of its own (e.g. Retry-After). */
export interface AnswerWithHeaders {
  status: number;
  headers: Record<string, string>;
}

/** How the receiver answers its n-th request (1-based): a status, or 'hang' (never answer). */
export type Answer = (n: number, received: ReceivedWebhook) => number | AnswerWithHeaders | 'hang';

/** Requests open at once, counted by one receiver or by several together. */
export interface OpenCount {
  /** Requests open now: arrived and neither answered nor dropped by the sender. */
  open: number;
  /** The most requests that were open at once. */
  mostOpen: number;
}

/** Counts for receivers counted together (`startReceiver`'s `together`). */
export const openCount = (): OpenCount => ({ open: 0, mostOpen: 0 });

export interface WebhookReceiver extends OpenCount {
  url: string;
  received: ReceivedWebhook[];
  answer: Answer;
  /** Resolves once `count` requests arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/**
 * An HTTP server on 127.0.0.1 that records every webhook it is sent, and
 * counts its open requests, also into `together` (counts shared with other receivers).
 */
export async function startReceiver(
  answer: Answer = () => 200,
  together?: OpenCount,
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const hanging: ServerResponse[] = [];
  let waiters: Array<() => void> = [];
  const receiver = { url: '', received, answer, open: 0, mostOpen: 0 } as WebhookReceiver;
  const server = createServer((request, response) => {
    const counts = together ? [receiver, together] : [receiver];
    for (const count of counts) {
      count.open += 1;
      count.mostOpen = Math.max(count.mostOpen, count.open);
    }
    response.on('close', () => {
      for (const count of counts) count.open -= 1;
    });
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = {
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(entry);
      const answer = receiver.answer(received.length, entry);
      if (answer === 'hang') hanging.push(response);
      else {
        const { status, headers } = typeof answer === 'number' ? { status: answer } : answer;
        response
          .writeHead(status, { 'content-type': 'text/plain', ...headers })
          .end(`answer ${status}`);
      }
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.waitFor = (count, timeoutMs = 20_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (received.length < count) return;
        clearTimeout(timer);
        waiters = waiters.filter((waiter) => waiter !== check);
        resolve(received);
      };
      const timer = setTimeout(() => {
        waiters = waiters.filter((waiter) => waiter !== check);
        reject(new Error(`received ${received.length} webhooks, not ${count}, in ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.push(check);
      check();
    });
  receiver.close = async () => {
    for (const response of hanging) response.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return receiver;
}
