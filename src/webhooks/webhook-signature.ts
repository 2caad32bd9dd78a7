import { createHmac } from 'node:crypto';

/** The Standard Webhooks secret prefix; the rest is standard base64 of the key bytes. */
const SECRET_PREFIX = 'whsec_';

/**
 * `v1,` + base64 HMAC-SHA256 of `id.timestamp.body` keyed with the secret's
 * decoded bytes: the Standard Webhooks signature (webhook-signature header).
 * Computed with node:crypto rather than the standardwebhooks package, whose
 * pure-JS SHA-256 is slower; webhook-signature.spec.ts checks the package's
 * verifier accepts it.
 */
export function signWebhook(
  secret: string,
  eventId: string,
  timestampSeconds: number,
  body: string,
): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${eventId}.${timestampSeconds}.${body}`);
  return `v1,${mac.digest('base64')}`;
}

/**
 * The webhook-signature header for `secrets`, newest first: their signatures
 * separated by spaces, as Standard Webhooks allows during a rotation, so that
 * a receiver with either secret verifies.
 */
export function signatureHeader(
  secrets: string[],
  eventId: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets.map((secret) => signWebhook(secret, eventId, timestampSeconds, body)).join(' ');
}

/** A new subscription secret: 32 random bytes, as the standardwebhooks package reads them. */
export function newWebhookSecret(random: Buffer): string {
  return SECRET_PREFIX + random.toString('base64');
}
