import type { Response } from 'supertest';
import type { TestApp } from './test-app.js';

/** JSON text in which bigints are written as plain JSON numbers, digit for digit. */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'bigint' ? `__bigint__${v}` : v,
  ).replace(/"__bigint__(-?\d+)"/g, '$1');
}

export interface NewPlantBody {
  id: bigint | number;
  name: string;
  tag?: string;
}

/** Small, typed helpers over the four operations, with raw JSON so that ids stay exact. */
export function plantsClient(t: TestApp, auth: string) {
  return {
    auth,
    create: (body: NewPlantBody | string): Promise<Response> =>
      t
        .http()
        .post('/plants')
        .set('Authorization', auth)
        .set('Content-Type', 'application/json')
        .send(typeof body === 'string' ? body : jsonText(body)),
    list: (limit?: number | string): Promise<Response> => {
      const call = t.http().get('/plants').set('Authorization', auth);
      return limit === undefined ? call : call.query({ limit: String(limit) });
    },
    get: (id: bigint | number | string): Promise<Response> =>
      t.http().get(`/plants/${id}`).set('Authorization', auth),
    remove: (id: bigint | number | string): Promise<Response> =>
      t.http().delete(`/plants/${id}`).set('Authorization', auth),
  };
}

/** Path ids that GET and DELETE /plants/{id} refuse with a 400: not decimal, or outside int64. */
export const MALFORMED_PLANT_IDS = [
  'abc',
  '1.5',
  '1e3',
  '9223372036854775808',
  '-9223372036854775809',
  '%20',
  '0x1',
];
