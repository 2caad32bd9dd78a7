import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import helmet from 'helmet';
import { describe, expect, it } from 'vitest';
import { API_SECURITY_HEADERS, documentationSecurityHeaders } from './security-headers.js';

/** The headers a real response gets from a helmet middleware. */
async function headersFrom(middleware: ReturnType<typeof helmet>): Promise<IncomingHttpHeaders> {
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

describe('documentationSecurityHeaders', () => {
  it('holds the CSP that Swagger UI needs, and no upgrade-insecure-requests', () => {
    const csp = documentationSecurityHeaders()['content-security-policy'];
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("style-src 'self' 'unsafe-inline'");
    expect(csp).toContain("img-src 'self' data:");
    expect(csp).not.toContain('upgrade-insecure-requests');
  });

  it("is every header helmet's defaults set on a real response, CSP aside", async () => {
    const fromHelmet = await headersFrom(helmet());
    const ours = documentationSecurityHeaders();
    const names = (headers: object) =>
      Object.keys(headers)
        .filter(
          (name) =>
            !['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(
              name,
            ),
        )
        .sort();
    expect(names(ours)).toEqual(names(fromHelmet));
    for (const name of names(ours).filter((n) => n !== 'content-security-policy')) {
      expect(ours[name], name).toBe(fromHelmet[name]);
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
