import type { IncomingMessage, Server } from 'node:http';
import { Socket } from 'node:net';

/**
 * How long a connection stays open for reading after such an answer. Enough
 * for the client to have read the answer, which it does while it sends (as
 * Apache's lingering close waits 2 s for data); short, so that a client that
 * stalls mid-body holds no socket long and delays a graceful shutdown by 2 s at most.
 */
const LINGER_MS = 2000;

/**
 * How much more of a body is read, at most, after the answer to a request
 * that authenticates no one (see readAtMost): as much as the largest body the
 * service takes by default.
 */
const UNAUTHENTICATED_BODY_BYTES = 64 * 1024;

/** The request a connection carries now; replaced by the next one on a keep-alive connection. */
const currentRequest = new WeakMap<Socket, IncomingMessage>();

/** What readAtMost allows a request's body: `max` bytes more from `bytesReadAtAnswer` on. */
interface BodyBudget {
  max: number;
  /** The connection's bytesRead when the answer was out; undefined until then. */
  bytesReadAtAnswer?: number;
}

const budgets = new WeakMap<IncomingMessage, BodyBudget>();

/**
 * Reads at most `maxBytes` more of the body of a request that is answered
 * before it (a 401 or 429: its sender authenticates no one): once the answer
 * is out and that much more is read, the connection closes, with a reset if
 * the client is still sending, rather than linger until the whole body has
 * been read and discarded: anyone without a token could otherwise make the
 * service read a body of any size, for up to `lingerMs`, per request.
 *
 * The client has the answer before the service stops reading: one that
 * writes its body while it reads (Node's http, curl) has read it when the
 * reset for its next bytes reaches it, and its write fails after the answer.
 * Called before the answer is sent (Node would discard the body unseen).
 */
export function readAtMost(request: IncomingMessage, maxBytes = UNAUTHENTICATED_BODY_BYTES): void {
  const budget: BodyBudget = { max: maxBytes };
  budgets.set(request, budget);
  // Node's HTTP parser reads the body in C++ and tells no one once the request
  // is answered; read here, each chunk comes through this listener.
  request.on('data', () => {
    const socket = request.socket;
    if (budget.bytesReadAtAnswer === undefined) return;
    if (socket.bytesRead - budget.bytesReadAtAnswer > budget.max) socket.destroy();
  });
}

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
 * passed, or, after readAtMost, its budget is spent. A complete request
 * closes as it always did.
 */
export function closeConnectionsInStages(server: Server, lingerMs = LINGER_MS): void {
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = function (this: Socket) {
      const unread = currentRequest.get(this);
      if (unread === undefined || unread.complete) {
        Socket.prototype.destroySoon.call(this);
        return;
      }
      const budget = budgets.get(unread);
      if (budget) budget.bytesReadAtAnswer = this.bytesRead;
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
