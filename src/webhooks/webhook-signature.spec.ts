import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signWebhook } from './webhook-signature.js';

describe('signWebhook', () => {
  it('signs as the standardwebhooks verifier expects, for any body', () => {
    const secret = newWebhookSecret(randomBytes(32));
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const timestamp = Math.floor(Date.now() / 1000);
    for (const body of [
      '{"id":1,"name":"Fern"}',
      '{"id":-9223372036854775808,"name":"🌿 ü \\u0001"}',
    ]) {
      const headers = {
        'webhook-id': 'msg_0123',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(secret, 'msg_0123', timestamp, body),
      };
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
      expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
      expect(() => new Webhook(newWebhookSecret(randomBytes(32))).verify(body, headers)).toThrow();
    }
  });
});
