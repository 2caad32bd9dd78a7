import type { Server } from 'node:http';
import request, { type Response } from 'supertest';
import { documentedResponses, type OpenApiResponseValidator } from './openapi-validator.js';

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'del', 'head', 'options']);

/** The supertest response in the form the validator reads. */
function receivedFrom(method: string, url: string, response: Response) {
  return {
    method,
    url,
    status: response.status,
    headers: response.headers as Record<string, string | string[] | undefined>,
    text: response.text ?? '',
  };
}

/**
 * supertest on the app's server, with every response checked against the
 * OpenAPI document before the test sees it: an undocumented status, a field
 * the schema does not have or a wrong Content-Type rejects the request's
 * promise, whatever the test goes on to assert.
 */
export function validatedRequest(
  server: Server,
  validator: OpenApiResponseValidator = documentedResponses(),
): ReturnType<typeof request> {
  const agent = request(server);
  return new Proxy(agent, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || !METHODS.has(property) || typeof value !== 'function') {
        return value;
      }
      const method = property === 'del' ? 'delete' : property;
      return (url: string) =>
        (value as (url: string) => request.Test)
          .call(target, url)
          .expect((response: Response) => validator.check(receivedFrom(method, url, response)));
    },
  });
}
