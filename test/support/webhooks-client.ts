import { expect } from 'vitest';
import { eventually } from './eventually.js';
import type { TestApp } from './test-app.js';

export interface Subscription {
  id: string;
  url: string;
  secret: string;
}

export interface Delivery {
  eventId: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatus?: number;
  lastError?: string;
  nextAttemptAt?: string;
  createdAt: string;
}

/** The webhook endpoints, as one owner calls them (every answer checked against openapi.json). */
export function webhooksClient(t: TestApp, auth: string) {
  return {
    subscribe: async (url: string, description?: string): Promise<Subscription> => {
      const response = await t
        .http()
        .post('/webhooks')
        .set('Authorization', auth)
        .send(description === undefined ? { url } : { url, description });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      return response.body as Subscription;
    },
    createPlant: async (body: string): Promise<void> => {
      const response = await t
        .http()
        .post('/plants')
        .set('Authorization', auth)
        .set('Content-Type', 'application/json')
        .send(body);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
    },
    deliveries: async (id: string): Promise<Delivery[]> => {
      const response = await t.http().get(`/webhooks/${id}/deliveries`).set('Authorization', auth);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body as Delivery[];
    },
    /** Polls the deliveries list until `done` holds of it; fails after `timeoutMs`. */
    async waitForDeliveries(
      id: string,
      done: (deliveries: Delivery[]) => boolean,
      timeoutMs = 15_000,
    ): Promise<Delivery[]> {
      let deliveries: Delivery[] = [];
      return eventually(
        async () => {
          deliveries = await this.deliveries(id);
          return done(deliveries) && deliveries;
        },
        () => `deliveries never reached the expected state: ${JSON.stringify(deliveries)}`,
        timeoutMs,
      );
    },
  };
}
