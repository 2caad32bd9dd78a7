import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

type Alg = 'RS256' | 'ES256';

interface SigningKey {
  kid: string;
  alg: Alg;
  privateKey: CryptoKey;
  publicPem: string;
  publicJwk: JWK;
}

/**
 * An OpenID Connect identity provider for the tests, on 127.0.0.1: a discovery
 * document and a JWKS, keys generated with jose, tokens signed on demand. It
 * can rotate its keys, and go down (connections are reset) and come back.
 */
export interface TestIssuer {
  url: string;
  /** How many times the JWKS was fetched. */
  jwksFetches(): number;
  /** A signed access token; claims default to a valid token for `audience`. */
  sign(claims?: JWTPayload, options?: { alg?: Alg; kid?: string }): Promise<string>;
  /** Replaces every key with new ones (new key ids); old tokens no longer verify. */
  rotate(): Promise<void>;
  /** The PEM of an algorithm's public key (for algorithm-confusion tests). */
  publicPem(alg: Alg): string;
  setDown(down: boolean): void;
  close(): Promise<void>;
}

type CryptoKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

async function newKey(alg: Alg): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `${alg.toLowerCase()}-${randomBytes(4).toString('hex')}`;
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicPem: await exportSPKI(publicKey), publicJwk };
}

export async function startTestIssuer(audience: string): Promise<TestIssuer> {
  let keys = await Promise.all([newKey('RS256'), newKey('ES256')]);
  let down = false;
  let fetches = 0;
  let url = '';
  const server: Server = createServer((request, response) => {
    if (down) {
      request.socket.destroy();
      return;
    }
    const send = (body: unknown) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.url === '/.well-known/openid-configuration') {
      send({ issuer: url, jwks_uri: `${url}/jwks` });
    } else if (request.url === '/jwks') {
      fetches += 1;
      send({ keys: keys.map((key) => key.publicJwk) });
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const keyOf = (alg: Alg) => keys.find((key) => key.alg === alg)!;
  return {
    url,
    jwksFetches: () => fetches,
    sign: async (claims = {}, { alg = 'RS256', kid } = {}) => {
      const key = keyOf(alg);
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: url,
        aud: audience,
        sub: 'alice',
        iat: now,
        exp: now + 300,
        ...claims,
      })
        .setProtectedHeader({ alg, kid: kid ?? key.kid, typ: 'at+jwt' })
        .sign(key.privateKey);
    },
    rotate: async () => {
      keys = await Promise.all([newKey('RS256'), newKey('ES256')]);
    },
    publicPem: (alg) => keyOf(alg).publicPem,
    setDown: (value) => (down = value),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
