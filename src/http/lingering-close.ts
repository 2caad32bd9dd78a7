import type { IncomingMessage, Server } from 'node:http';
import { Socket } from 'node:net';

/**
 * How long a connection stays open for reading after such an answer. Enough
 * for the client to have read the answer, which it does while it sends (as
 * Apache's lingering close waits 2 s for data); short, so that a client that
 * stalls mid-body holds no socket long and delays a graceful shutdown by 2 s at most.
 */
const LINGER_MS = 2000;

/** The request a connection carries now; replaced by the next one on a keep-alive connection. */
const currentRequest = new WeakMap<Socket, IncomingMessage>();

/**
 * Closes a connection in stages when the server answers before it has read
 * the whole request, as a 413 for an announced Content-Length over the body
 * limit does (RFC 9112 section 9.6, "Tear-down").
 *
 * Node ends such a connection with `socket.destroySoon()`: FIN after the
 * answer, then a full close as soon as it is flushed. The client is usually
 * still sending its body then; the kernel answers those bytes with a reset,
 * and a client whose write fails on it (Node's net, curl) drops the 413 it
 * had already received and reports "socket hang up" or EPIPE instead. That
 * happened to about one 2 MB request in twelve here.
 *
 * So for an incomplete request, the answer is sent and the write side shut as
 * before, but the read side stays open, and Node's parser goes on discarding
 * the rest of the body, until the client closes its side or `lingerMs` has
 * passed. A complete request closes as it always did.
 */
export function closeConnectionsInStages(server: Server, lingerMs = LINGER_MS): void {
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = function (this: Socket) {
      const unread = currentRequest.get(this);
      if (unread === undefined || unread.complete) {
        Socket.prototype.destroySoon.call(this);
        return;
      }
      lingerThenClose(this, lingerMs);
    };
  });
  server.on('request', (request: IncomingMessage) => currentRequest.set(request.socket, request));
}

function lingerThenClose(socket: Socket, lingerMs: number): void {
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // The client's FIN: it has sent all it will. Close once the answer is out (a
  // client that half-closes after its request still reads the answer).
  socket.once('end', () => Socket.prototype.destroySoon.call(socket));
  if (socket.writable) socket.end();
  socket.resume();
}
