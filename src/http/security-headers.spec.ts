import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import helmet from 'helmet';
import { describe, expect, it } from 'vitest';
import { API_SECURITY_HEADERS, setSecurityHeaders } from './security-headers.js';

const TRANSPORT = ['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'];
const names = (headers: object) =>
  Object.keys(headers)
    .filter((name) => !TRANSPORT.includes(name) && name !== 'content-type')
    .sort();

/** The headers a real response gets from plain helmet() on a plain Node server. */
async function headersFromHelmetDefaults(): Promise<IncomingHttpHeaders> {
  const middleware = helmet();
  const server = createServer((req, res) => middleware(req, res, () => res.end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) =>
      request(`http://127.0.0.1:${port}/`, (res) => {
        res.resume();
        resolve(res.headers);
      })
        .on('error', reject)
        .end(),
    );
  } finally {
    server.close();
  }
}

/** The headers setSecurityHeaders gives a Fastify response for `url`. */
async function headersFor(url: string): Promise<Record<string, unknown>> {
  const fastify = Fastify();
  fastify.addHook('onRequest', setSecurityHeaders);
  fastify.get('/*', async () => ({ ok: true }));
  try {
    return (await fastify.inject({ method: 'GET', url })).headers;
  } finally {
    await fastify.close();
  }
}

describe('setSecurityHeaders', () => {
  it('gives Swagger UI pages a CSP it can run under, without upgrade-insecure-requests', async () => {
    const csp = String((await headersFor('/docs'))['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("style-src 'self' 'unsafe-inline'");
    expect(csp).toContain("img-src 'self' data:");
    expect(csp).not.toContain('upgrade-insecure-requests');
  });

  it("gives Swagger UI pages every header of helmet's defaults, CSP aside", async () => {
    const fromHelmet = await headersFromHelmetDefaults();
    const ours = await headersFor('/docs/index.html');
    expect(names(ours)).toEqual(names(fromHelmet));
    for (const name of names(ours).filter((n) => n !== 'content-security-policy')) {
      expect(ours[name], name).toBe(fromHelmet[name]);
    }
  });

  it('gives every other response exactly the API set', async () => {
    const headers = await headersFor('/plants');
    expect(names(headers)).toEqual(Object.keys(API_SECURITY_HEADERS).sort());
    for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) {
      expect(headers[name], name).toBe(value);
    }
  });
});

describe('API_SECURITY_HEADERS', () => {
  it('is the OWASP REST set: no caching, no framing, no sniffing, HTTPS only', () => {
    expect(API_SECURITY_HEADERS).toEqual({
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
    });
  });
});
