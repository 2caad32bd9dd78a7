import { describe, expect, it } from 'vitest';
import {
  OpenApiResponseValidator,
  readCommittedDocument,
  type ReceivedResponse,
} from './support/openapi-validator.js';
import { plantsClient } from './support/plants-client.js';
import { useTestApp } from './support/test-app.js';
import { validatedRequest } from './support/validated-request.js';

const REQUEST_ID = { 'x-request-id': 'req-1' };
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8', ...REQUEST_ID };

const response = (overrides: Partial<ReceivedResponse>): ReceivedResponse => ({
  method: 'GET',
  url: '/plants?limit=2',
  status: 200,
  headers: JSON_TYPE,
  text: '[]',
  ...overrides,
});

const error = (status: number, extra: object = {}) =>
  JSON.stringify({ error: status, message: 'what was wrong', ...extra });

describe('the response validator of the e2e suites (fed from openapi.json)', () => {
  const validator = new OpenApiResponseValidator(readCommittedDocument());

  it('accepts responses as documented', () => {
    for (const ok of [
      response({ text: '[{"name":"Fern","tag":"green"},{"name":"Cactus"}]' }),
      response({ method: 'POST', url: '/plants', text: '{"name":"Fern"}' }),
      response({ method: 'DELETE', url: '/plants/-5', status: 204, headers: REQUEST_ID, text: '' }),
      response({
        status: 401,
        headers: { ...JSON_TYPE, 'www-authenticate': 'Bearer realm="plants"' },
        text: error(401),
      }),
      response({ method: 'PUT', url: '/plants/1', status: 404, text: error(404) }),
      response({ url: '/health/ready', text: '{"status":"ok"}' }),
    ]) {
      expect(validator.problems(ok), ok.url).toEqual([]);
    }
  });

  it.each([
    [
      'an undocumented status',
      response({ method: 'DELETE', url: '/plants/1', status: 409, text: error(409) }),
      /status 409 is not documented for deletePlant/,
    ],
    [
      'a field the schema does not have',
      response({ method: 'POST', url: '/plants', text: '{"name":"Fern","id":1}' }),
      /must NOT have additional properties.*"additionalProperty":"id"/,
    ],
    [
      'an extra field in an Error',
      response({ status: 400, text: error(400, { stack: 'at x' }) }),
      /additionalProperty":"stack"/,
    ],
    [
      'a missing required field',
      response({ text: '[{"tag":"green"}]' }),
      /body\/0 must have required property 'name'/,
    ],
    [
      'a null tag',
      response({ text: '[{"name":"Fern","tag":null}]' }),
      /body\/0\/tag must be string/,
    ],
    ['an error code outside int32', response({ status: 400, text: error(2 ** 31) }), /int32/],
    [
      'another Content-Type',
      response({ headers: { 'content-type': 'text/plain' } }),
      /Content-Type text\/plain is not documented/,
    ],
    [
      'a body on a response documented without one',
      response({ method: 'DELETE', url: '/plants/1', status: 204, text: '{}' }),
      /documented without a body/,
    ],
    [
      'a 401 without its required WWW-Authenticate',
      response({ status: 401, text: error(401) }),
      /required header WWW-Authenticate is missing/,
    ],
    [
      'a response without its X-Request-Id',
      response({ headers: { 'content-type': 'application/json; charset=utf-8' } }),
      /required header X-Request-Id is missing/,
    ],
    [
      'a success for a route the document does not have',
      response({ method: 'PATCH', url: '/plants/1', text: '{"name":"Fern"}' }),
      /no documented operation/,
    ],
  ])('rejects %s', (_, received, problem) => {
    expect(() => validator.check(received)).toThrow(problem);
  });
});

describe('validated requests against the running app', () => {
  const t = useTestApp('sqlite');

  it('reject a real response that the document does not allow, whatever the test asserts', async () => {
    const { auth } = await t.current.newCaller();
    expect(
      (await plantsClient(t.current, auth).create({ id: 1, name: 'Fern', tag: 'g' })).status,
    ).toBe(200);
    // The same app, checked against a document in which Plant has no tag.
    const document = readCommittedDocument();
    const plant = document.components!.schemas!.Plant as { properties: Record<string, unknown> };
    delete plant.properties.tag;
    const stricter = validatedRequest(
      t.current.app.getHttpServer(),
      new OpenApiResponseValidator(document),
    );
    await expect(stricter.get('/plants').set('Authorization', auth)).rejects.toThrow(
      /GET \/plants -> 200: body\/0 must NOT have additional properties/,
    );
    // useTestApp's http() checks against the committed document: the same request passes.
    expect((await t.current.http().get('/plants').set('Authorization', auth)).body).toEqual([
      { name: 'Fern', tag: 'g' },
    ]);
  });
});
