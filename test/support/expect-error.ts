import type { Response } from 'supertest';
import { expect } from 'vitest';

/** The contract's error shape: status, JSON content type, exactly {error, message}, error = status. */
export function expectError(response: Response, status: number, message?: RegExp): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(response.body).sort()).toEqual(['error', 'message']);
  expect(response.body.error).toBe(status);
  expect(typeof response.body.message).toBe('string');
  expect(response.body.message.length).toBeGreaterThan(0);
  if (message) expect(response.body.message).toMatch(message);
}
