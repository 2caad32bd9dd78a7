import createClient, { type Client, type Middleware } from 'openapi-fetch';
import {
  checkFetchResponse,
  documentedResponses,
  type OpenApiResponseValidator,
} from './openapi-validator.js';
import type { paths } from './openapi-types.js';

/** openapi-fetch middleware that checks every response against the document. */
function validatingMiddleware(
  validator: OpenApiResponseValidator = documentedResponses(),
): Middleware {
  return {
    async onResponse({ request, response }) {
      await checkFetchResponse(request.method, request.url, response, validator);
      return undefined;
    },
  };
}

/**
 * A client generated from openapi.json alone (types by openapi-typescript,
 * calls by openapi-fetch), as an API consumer would build it.
 */
export function typedClient(baseUrl: string, authorization?: string): Client<paths> {
  const client = createClient<paths>({
    baseUrl,
    headers: authorization === undefined ? {} : { Authorization: authorization },
  });
  client.use(validatingMiddleware());
  return client;
}
