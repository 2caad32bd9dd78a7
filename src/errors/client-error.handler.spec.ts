import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { API_SECURITY_HEADERS } from '../http/security-headers.js';
import { answerClientError } from './client-error.handler.js';

function fakeSocket(destroyed = false) {
  const written: string[] = [];
  const socket = {
    destroyed,
    writable: !destroyed,
    write: (text: string) => written.push(text),
    destroy: () => (socket.destroyed = true),
  };
  return { socket, written };
}

const answer = (code: string) => {
  const { socket, written } = fakeSocket();
  answerClientError(Object.assign(new Error('parse error'), { code }), socket as unknown as Socket);
  expect(socket.destroyed).toBe(true);
  const [head, body] = written.join('').split('\r\n\r\n');
  return { head, body: JSON.parse(body) as unknown };
};

describe('answerClientError', () => {
  it.each([
    ['HPE_INVALID_HEADER_TOKEN', 400, /not valid HTTP/],
    ['HPE_HEADER_OVERFLOW', 431, /too large/],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, /too long/],
  ])('answers %s with %i in the Error shape and closes the connection', (code, status, message) => {
    const { head, body } = answer(code);
    expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    expect(head).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
    expect(head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}\r\n/);
    for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) {
      expect(head).toContain(`\r\n${name}: ${value}\r\n`);
    }
    expect(body).toEqual({ error: status, message: expect.stringMatching(message) });
  });

  it('writes nothing on a connection that is already gone', () => {
    const { socket, written } = fakeSocket(true);
    answerClientError(
      Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
      socket as unknown as Socket,
    );
    expect(written).toEqual([]);
  });
});
