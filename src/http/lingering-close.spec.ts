import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postWithNodeHttp, startUpload } from '../../test/support/raw-http.js';
import { closeConnectionsInStages, readAtMost } from './lingering-close.js';

const ANSWER = '{"error":413,"message":"request body is too large"}';
const BODY_BYTES = 4 * 1024 * 1024;
const HEAD = 'POST /plants HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n';

/**
 * Answers every request at once without reading its body, and asks for the
 * connection to close: what Fastify does for a Content-Length over its limit.
 */
async function refusingServer(
  lingerMs?: number,
  bodyBudget?: number,
): Promise<{ server: Server; port: number; bytesRead: Promise<number> }> {
  const server = createServer((request, response) => {
    if (bodyBudget !== undefined) readAtMost(request, bodyBudget);
    response.writeHead(413, {
      'content-type': 'application/json',
      'content-length': ANSWER.length,
      connection: 'close',
    });
    response.end(ANSWER);
  });
  if (lingerMs !== undefined) closeConnectionsInStages(server, lingerMs);
  // What the server read of the first connection, once it is closed.
  const bytesRead = new Promise<number>((resolve) =>
    server.once('connection', (socket: Socket) =>
      socket.once('close', () => resolve(socket.bytesRead)),
    ),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, bytesRead };
}

describe('closeConnectionsInStages', () => {
  let server: Server | undefined;
  afterEach(() => {
    server?.closeAllConnections();
    server?.close();
    server = undefined;
  });

  it('keeps reading a body the answer came before, so the client can send it all and close cleanly', async () => {
    let port: number;
    let bytesRead: Promise<number>;
    ({ server, port, bytesRead } = await refusingServer(10_000));
    const upload = startUpload(port, HEAD, BODY_BYTES, 1024);
    const answer = await upload.answer;
    expect(answer.answered && answer.status).toBe(413);
    await upload.finish(BODY_BYTES - 1024);
    expect(upload.errors).toEqual([]);
    expect(await bytesRead).toBeGreaterThan(BODY_BYTES);
  });

  it('reads at most the budget readAtMost gives a body, and the client writing it in one go still reads the answer', async () => {
    const budget = 64 * 1024;
    let port: number;
    let bytesRead: Promise<number>;
    ({ server, port, bytesRead } = await refusingServer(10_000, budget));
    const started = Date.now();
    const outcome = await postWithNodeHttp(port, {}, BODY_BYTES);
    expect(outcome.status).toBe(413);
    expect(outcome.body).toBe(ANSWER);
    // The head's read, the budget and the read that went past it (Node reads 64 KiB at a time), not the 4 MiB.
    expect(await bytesRead).toBeLessThanOrEqual(budget + 2 * 64 * 1024);
    // Closed at once, not after the 10 s linger.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('without it, Node closes at once and the rest of that upload is reset', async () => {
    let port: number;
    ({ server, port } = await refusingServer());
    const upload = startUpload(port, HEAD, BODY_BYTES, 1024);
    const answer = await upload.answer;
    expect(answer.answered && answer.status).toBe(413);
    await upload.finish(BODY_BYTES - 1024);
    expect(upload.errors[0]).toMatch(/^(ECONNRESET|EPIPE)$/);
  });

  it('closes after lingerMs when the client neither sends the rest nor closes', async () => {
    let port: number;
    ({ server, port } = await refusingServer(200));
    const serverSideClosed = new Promise<number>((resolve) =>
      server?.once('connection', (socket: Socket) =>
        socket.once('close', () => resolve(Date.now())),
      ),
    );
    const upload = startUpload(port, HEAD, BODY_BYTES, 1024);
    await upload.answer;
    const answeredAt = Date.now();
    // The first test shows it lingers; this one that it stops: long before the test's timeout.
    expect((await serverSideClosed) - answeredAt).toBeLessThan(4000);
    upload.socket.destroy();
  });

  it('closes a connection whose request was read whole at once, as Node does', async () => {
    let port: number;
    ({ server, port } = await refusingServer(10_000));
    const upload = startUpload(port, HEAD, 10, 10);
    const answer = await upload.answer;
    expect(answer.answered && answer.status).toBe(413);
    // A client that writes past its request is reset: the server does not linger for it.
    await upload.finish(BODY_BYTES);
    expect(upload.errors[0]).toMatch(/^(ECONNRESET|EPIPE)$/);
  });
});
