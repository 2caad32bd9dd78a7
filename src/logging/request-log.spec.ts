import type { FastifyReply, FastifyRequest } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RequestLog } from './request-log.js';

/** The line RequestLog writes for a request to `url`, as written. */
function lineFor(url: string): string {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  const request = { id: 'r-1', method: 'GET', url, routeOptions: { url: undefined } };
  const reply = { statusCode: 404, elapsedTime: 1.5 };
  new RequestLog(logger).write(
    request as unknown as FastifyRequest,
    reply as unknown as FastifyReply,
  );
  expect(lines).toHaveLength(1);
  return lines[0];
}

describe('RequestLog', () => {
  it('writes a normal URL as it is', () => {
    const line = lineFor('/plants?limit=5&after=abc');
    expect(JSON.parse(line).req.url).toBe('/plants?limit=5&after=abc');
    expect(line).not.toContain('[cut');
  });

  it('cuts a long URL at 2 KiB and says how much was cut, in a short line', () => {
    const url = `/health/live?${'a=b&'.repeat(3840)}`;
    expect(url.length).toBeGreaterThan(15_000);
    const line = lineFor(url);
    expect(line.length).toBeLessThan(2600);
    expect(JSON.parse(line).req.url).toBe(
      `${url.slice(0, 2048)}…[cut ${url.length - 2048} characters]`,
    );
  });

  it('redacts before it cuts: a token across the cut leaves nothing of itself', () => {
    const body = 'Q'.repeat(20) + 'z'.repeat(23);
    const token = JSON.parse(lineFor(`/nope/${'x'.repeat(2030)}pst%5F${body}`)).req.url;
    expect(token).toContain('%5BREDACTED');
    expect(token).not.toMatch(/QQQ|zzz/);
    // Cut first, this JWT would have lost its signature, and with it its shape.
    const jwt = `eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0.${body}`;
    const logged = JSON.parse(lineFor(`/nope/${'x'.repeat(2020)}${jwt}`)).req.url;
    expect(logged).toContain('%5BREDACTED');
    expect(logged).not.toMatch(/eyJ|QQQ/);
  });
});
