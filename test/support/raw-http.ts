import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Answer } from './hostile-answer.js';
import type { HostileRequest } from './hostile-requests.js';

/** What came back on a raw connection: an HTTP answer, or nothing before the server closed. */
export type RawAnswer =
  (Answer & { answered: true; raw: string }) | { answered: false; raw: string };

function decodeChunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) break;
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

function parseAnswer(bytes: Buffer): RawAnswer {
  const raw = bytes.toString('latin1');
  const headEnd = bytes.indexOf('\r\n\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(raw);
  if (headEnd < 0 || !match) return { answered: false, raw };
  const lines = bytes.subarray(0, headEnd).toString('latin1').split('\r\n').slice(1);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = bytes.subarray(headEnd + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = decodeChunked(body);
  return { answered: true, status: Number(match[1]), headers, body: body.toString('utf8'), raw };
}

/**
 * Writes bytes on a new TCP connection and reads until the server closes it
 * (or `timeoutMs` passes): for requests no HTTP client library would send.
 * With `end`, the client closes its side after writing (a request cut short).
 */
export function sendRaw(
  port: number,
  bytes: Buffer,
  { end = false, timeoutMs = 5000 } = {},
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1');
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parseAnswer(Buffer.concat(chunks)));
    };
    const timer = setTimeout(done, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', done);
    socket.on('error', () => undefined);
    socket.write(bytes);
    if (end) socket.end();
  });
}

/** A request as HTTP/1.1 bytes, with a correct Content-Length and Connection: close. */
export function requestBytes(request: HostileRequest): Buffer {
  const body =
    request.body === undefined
      ? Buffer.alloc(0)
      : Buffer.isBuffer(request.body)
        ? request.body
        : Buffer.from(request.body, 'utf8');
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const length = request.body === undefined ? '' : `content-length: ${body.length}\r\n`;
  const head = `${request.method} ${request.url} HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers}${length}connection: close\r\n\r\n`;
  // Header values travel as bytes: write them as UTF-8, as a careless client would.
  return Buffer.concat([Buffer.from(head, 'utf8'), body]);
}

/** An upload on a raw connection whose answer may come before its body is all sent. */
export interface Upload {
  socket: Socket;
  /** The answer, once its head and Content-Length bytes of body have arrived. */
  answer: Promise<RawAnswer>;
  /** Error codes the client's socket saw (ECONNRESET, EPIPE: the server reset it). */
  errors: string[];
  /**
   * Once the server has closed its side of the connection, sends `bytes` more
   * of the body, ends the client's side and waits for the close.
   */
  finish(bytes: number): Promise<void>;
}

/**
 * Sends a request head announcing `contentLength` bytes of body and the first
 * `firstBodyBytes` of them. The socket is half-open, so the server's FIN after
 * an early answer does not end the upload from this side, as with a client
 * still busy sending (curl, a browser).
 */
export function startUpload(
  port: number,
  head: string,
  contentLength: number,
  firstBodyBytes: number,
): Upload {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  const errors: string[] = [];
  const chunks: Buffer[] = [];
  socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  // The server's FIN (its side closed), or a reset that closes both.
  const serverDone = new Promise<void>((resolve) => {
    socket.once('end', () => resolve());
    void closed.then(resolve);
  });
  const answer = new Promise<RawAnswer>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const bytes = Buffer.concat(chunks);
      const headEnd = bytes.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = bytes.subarray(0, headEnd).toString('latin1');
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (length && bytes.length - headEnd - 4 >= Number(length[1])) {
        resolve(parseAnswer(bytes));
      }
    });
    void closed.then(() => resolve(parseAnswer(Buffer.concat(chunks))));
  });
  socket.write(`${head}content-length: ${contentLength}\r\n\r\n`);
  socket.write(Buffer.alloc(firstBodyBytes, 'x'));
  const finish = async (bytes: number) => {
    // Once the server has closed its side: one that closes without lingering has closed.
    await serverDone;
    await new Promise<void>((resolve) => {
      socket.write(Buffer.alloc(bytes, 'x'), () => resolve());
      socket.once('error', () => resolve());
    });
    socket.end();
    await closed;
  };
  return { socket, answer, errors, finish };
}

/** What Node's http client made of a request: the answer it read, and the error it saw, if any. */
export interface ClientOutcome {
  status?: number;
  body?: string;
  /** The request's error (EPIPE, ECONNRESET: the server reset the connection), if it came before the answer ended. */
  error?: string;
}

/** Where postWithNodeHttp sends its body, and what the body is. */
export interface Target {
  method?: string;
  path?: string;
  /** The body's first byte, the rest spaces: `{` makes it JSON that does not parse. */
  firstByte?: string;
}

/**
 * Sends `size` bytes of body (POST /plants unless `target` says otherwise)
 * with Node's http client, written in one go (as `request.end(body)` does),
 * and waits until the request is done with.
 */
export function postWithNodeHttp(
  port: number,
  headers: Record<string, string>,
  size: number,
  { method = 'POST', path = '/plants', firstByte = ' ' }: Target = {},
): Promise<ClientOutcome> {
  return new Promise((resolve) => {
    const outcome: ClientOutcome = {};
    let answered = false;
    const body = Buffer.alloc(size, ' ');
    body.write(firstByte);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { 'content-type': 'application/json', 'content-length': size, ...headers },
      },
      (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          outcome.status = response.statusCode;
          outcome.body = Buffer.concat(chunks).toString('utf8');
        });
        // After 'end', or instead of it when the connection broke mid-answer.
        response.on('close', () => resolve(outcome));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      outcome.error = error.code ?? error.message;
    });
    req.on('close', () => {
      if (!answered) resolve(outcome);
    });
    req.end(body);
  });
}
