import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { API_SECURITY_HEADERS } from '../http/security-headers.js';
import { ErrorDto } from './error.dto.js';

/** The API's security headers as raw header lines, written once. */
const SECURITY_HEADER_LINES = Object.entries(API_SECURITY_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

function statusAndMessage(code: string | undefined): [number, string] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'the request took too long to arrive'];
  if (code === 'HPE_HEADER_OVERFLOW') {
    return [431, 'the request head (URL and headers) is too large'];
  }
  return [400, 'the request is not valid HTTP/1.1'];
}

/**
 * Answers a request that Node's HTTP parser refused (broken framing, a bad
 * header, an oversized head) before Fastify or Nest could see it. Fastify's
 * default answer, {"error":"Bad Request","message":"Client Error",
 * "statusCode":400}, is not the contract's shape; this one is, with the
 * headers of every other answer: a new X-Request-Id (the request's own could
 * not be read) and the security headers. Like that default, it then closes
 * the connection, whose framing can no longer be trusted.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] = statusAndMessage(error.code);
  const body = JSON.stringify(new ErrorDto(status, message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomUUID()}\r\n` +
        SECURITY_HEADER_LINES +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}
