import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

export type JwtAlgorithm = 'RS256' | 'ES256';

/** The audience of the bench's access tokens, which the service is told to require. */
const BENCH_AUDIENCE = 'plant-store-bench';

/**
 * An OpenID Connect issuer on 127.0.0.1 for JWT callers: a discovery document,
 * a JWKS of one key, and access tokens signed with it.
 */
export interface BenchIssuer {
  url: string;
  /** The service's settings that make it accept this issuer's tokens. */
  env: Record<string, string>;
  /** An access token for `sub`, valid for `seconds`. */
  sign(sub: string, seconds: number): Promise<string>;
  close(): Promise<void>;
}

export async function startIssuer(alg: JwtAlgorithm): Promise<BenchIssuer> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `bench-${randomBytes(4).toString('hex')}`;
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }] };
  let url = '';
  const server = createServer((request, response) => {
    const body =
      request.url === '/.well-known/openid-configuration'
        ? { issuer: url, jwks_uri: `${url}/jwks` }
        : request.url === '/jwks'
          ? jwks
          : undefined;
    if (!body) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    env: { AUTH_JWT_ISSUER: url, AUTH_JWT_AUDIENCE: BENCH_AUDIENCE },
    sign: (sub, seconds) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: url, aud: BENCH_AUDIENCE, sub, iat: now, exp: now + seconds })
        .setProtectedHeader({ alg, kid, typ: 'at+jwt' })
        .sign(privateKey);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
