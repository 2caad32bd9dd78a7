import { ArgumentsHost, Logger, NotFoundException } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpErrorFilter, withoutQueryString } from './http-error.filter.js';

function fakeHost(url = '/plants?access_token=pst_secret', headersSent = false) {
  const sent: {
    status?: number;
    headers: Record<string, string>;
    body?: unknown;
    destroyed: boolean;
  } = {
    headers: {},
    destroyed: false,
  };
  const reply = {
    sent: headersSent,
    raw: { headersSent, destroy: () => (sent.destroyed = true) },
    status(code: number) {
      sent.status = code;
      return reply;
    },
    headers(values: Record<string, string>) {
      Object.assign(sent.headers, values);
      return reply;
    },
    header(name: string, value: string) {
      sent.headers[name] = value;
      return reply;
    },
    send(body: unknown) {
      sent.body = body;
      return reply;
    },
  };
  const host = {
    switchToHttp: () => ({ getResponse: () => reply, getRequest: () => ({ method: 'GET', url }) }),
  } as unknown as ArgumentsHost;
  return { host, sent };
}

describe('HttpErrorFilter', () => {
  afterEach(() => vi.restoreAllMocks());

  it('answers the Error shape with a JSON content type', () => {
    const { host, sent } = fakeHost();
    new HttpErrorFilter().catch(new NotFoundException('no plant with id 3'), host);
    expect(sent.status).toBe(404);
    expect(sent.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(JSON.stringify(sent.body))).toEqual({
      error: 404,
      message: 'no plant with id 3',
    });
  });

  it('never repeats the query string (it may carry ?access_token=) in an error body', () => {
    const url = '/nope?access_token=pst_secret%2Fx';
    const { host, sent } = fakeHost(url);
    new HttpErrorFilter().catch(new NotFoundException(`Cannot GET ${url}`), host);
    expect(sent.status).toBe(404);
    expect(JSON.parse(JSON.stringify(sent.body))).toEqual({
      error: 404,
      message: 'Cannot GET /nope',
    });
    expect(withoutQueryString("'/a?t=pst_x/y' is not valid", '/a?t=pst_x%2Fy')).toBe(
      "'/a' is not valid",
    );
    expect(withoutQueryString('no plant with id 3', '/plants/3?x=%E0%A4%A')).toBe(
      'no plant with id 3',
    );
  });

  it('logs the cause of a 500 with its stack, but not the query string', () => {
    const logged = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { host, sent } = fakeHost();
    new HttpErrorFilter().catch(new Error('SQL exploded'), host);
    expect(sent.status).toBe(500);
    expect(JSON.stringify(sent.body)).not.toContain('SQL exploded');
    expect(logged).toHaveBeenCalledTimes(1);
    const [message, stack] = logged.mock.calls[0] as [string, string];
    expect(message).toBe('GET /plants -> 500');
    expect(stack).toContain('SQL exploded');
    expect(JSON.stringify(logged.mock.calls)).not.toContain('pst_secret');
  });

  it('redacts a percent-encoded token in a quoted path whole', () => {
    const rest = 'Q'.repeat(20) + 'z'.repeat(20);
    const url = `/nope/pst_abc%2D${rest}`;
    const { host, sent } = fakeHost(url);
    new HttpErrorFilter().catch(new NotFoundException(`Cannot GET ${url}`), host);
    expect(JSON.parse(JSON.stringify(sent.body))).toEqual({
      error: 404,
      message: 'Cannot GET /nope/%5BREDACTED%5D',
    });
  });

  it('logs the path of a 500 redacted, and cut after 2 KiB', () => {
    const rest = 'Q'.repeat(20) + 'z'.repeat(20);
    const logged = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const long = `/plants/${'x'.repeat(5000)}/pst%5F${rest}`;
    new HttpErrorFilter().catch(new Error('SQL exploded'), fakeHost(`/nope/pst%5F${rest}`).host);
    new HttpErrorFilter().catch(new Error('SQL exploded'), fakeHost(long).host);
    const [[first], [second]] = logged.mock.calls as [string, string][];
    expect(first).toBe('GET /nope/%5BREDACTED%5D -> 500');
    // Redacted first (the token becomes the 14 characters of %5BREDACTED%5D), then cut.
    const redactedLength = '/plants/'.length + 5000 + '/'.length + 14;
    expect(second).toBe(
      `GET ${long.slice(0, 2048)}…[cut ${redactedLength - 2048} characters] -> 500`,
    );
  });

  it('cuts the connection when the response had already started (a streamed list failed half-way)', () => {
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { host, sent } = fakeHost('/plants', true);
    new HttpErrorFilter().catch(new Error('connection lost'), host);
    expect(sent.destroyed).toBe(true);
    expect(sent.body).toBeUndefined();
  });
});
