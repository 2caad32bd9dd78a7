import { readFileSync } from 'node:fs';
import type { OpenAPIObject } from '@nestjs/swagger';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../src/openapi/openapi.js';
import { serializeOpenApiDocument } from '../src/openapi/serialize-openapi.js';
import { useTestApp } from './support/test-app.js';

describe('OpenAPI document', () => {
  const t = useTestApp('sqlite');
  const served = async (): Promise<OpenAPIObject> =>
    (await t.current.http().get('/docs-json')).body;

  it('is committed as openapi.json and matches what the code generates (run npm run openapi:export)', () => {
    const committed = readFileSync('openapi.json', 'utf8');
    expect(committed).toBe(serializeOpenApiDocument(buildOpenApiDocument(t.current.app)));
  });

  it('is served at /docs-json and /docs-yaml, with Swagger UI at /docs', async () => {
    const json = await t.current.http().get('/docs-json');
    expect(json.status).toBe(200);
    expect(json.body.info).toMatchObject({ title: 'Plant Store', version: '1.0.0' });
    const yaml = await t.current.http().get('/docs-yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.text).toMatch(/^openapi: 3/m);
    const ui = await t.current.http().get('/docs').redirects(1);
    expect(ui.status).toBe(200);
    expect(ui.text).toMatch(/swagger-ui/i);
  });

  it('names in its introduction exactly the routes that need no token, as the service serves them', async () => {
    const doc = await served();
    const methods = ['get', 'put', 'post', 'delete', 'patch'] as const;
    const open: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of methods) {
        const operation = item[method];
        if (operation && (operation.security ?? []).length === 0) open.push(`${method} ${path}`);
      }
    }
    expect(open).toEqual(['get /health/live', 'get /health/ready']);
    const intro = doc.info.description!;
    expect(intro).not.toMatch(/every operation requires/i);
    expect(intro).toContain(
      'The plants and webhooks operations require a bearer token (bearerAuth).',
    );
    const publicRoutes = [
      '/health/live',
      '/health/ready',
      '/docs',
      '/docs-json',
      '/docs-yaml',
      '/metrics',
    ];
    for (const path of publicRoutes) {
      expect(intro).toContain(path);
      const response = await t.current.http().get(path).redirects(1);
      expect(response.status, path).toBe(200);
    }
    expect((await t.current.http().get('/plants')).status).toBe(401);
    expect((await t.current.http().get('/webhooks')).status).toBe(401);
  });

  it('declares bearerAuth (HTTP bearer) on every plants operation', async () => {
    const doc = await served();
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    const operations = [
      doc.paths['/plants'].post,
      doc.paths['/plants'].get,
      doc.paths['/plants/{id}'].delete,
    ];
    for (const operation of operations) expect(operation?.security).toEqual([{ bearerAuth: [] }]);
    expect(operations.map((o) => o?.operationId)).toEqual([
      'createPlant',
      'listPlants',
      'deletePlant',
    ]);
  });

  it('gives the after cursor of every list no example, which Swagger UI would pre-fill in "Try it out"', async () => {
    const { paths } = await served();
    const afters = Object.values(paths)
      .flatMap((item) => Object.values(item))
      .flatMap((operation) => (operation as { parameters?: unknown[] }).parameters ?? [])
      .filter((parameter) => (parameter as { name?: string }).name === 'after') as Array<{
      example?: unknown;
      examples?: unknown;
      schema: { example?: unknown; examples?: unknown; default?: unknown };
    }>;
    expect(afters).toHaveLength(3);
    for (const after of afters) {
      expect(after.example ?? after.examples).toBeUndefined();
      expect(after.schema.example ?? after.schema.examples ?? after.schema.default).toBeUndefined();
    }
  });

  it('declares Plant, NewPlant and Error with their required fields, int64 ids and an int32 limit', async () => {
    const { components, paths } = await served();
    type ObjectSchema = {
      type?: string;
      required?: string[];
      properties: Record<string, { type?: string; format?: string }>;
      allOf?: unknown;
    };
    const schemas = components!.schemas as Record<string, ObjectSchema>;
    expect(schemas.Plant.required).toEqual(['name']);
    expect(Object.keys(schemas.Plant.properties).sort()).toEqual(['name', 'tag']);
    expect(schemas.Plant.properties.tag).toMatchObject({ type: 'string' });
    // As in the specification: NewPlant is Plant (name required, tag optional) plus a required
    // id, written out as one object (an allOf shows in Swagger UI as "(any & object)").
    expect(schemas.NewPlant).toMatchObject({ type: 'object', required: ['id', 'name'] });
    expect(schemas.NewPlant.allOf).toBeUndefined();
    expect(Object.keys(schemas.NewPlant.properties)).toEqual(['id', 'name', 'tag']);
    expect(schemas.NewPlant.properties.id).toMatchObject({ type: 'integer', format: 'int64' });
    for (const field of ['name', 'tag']) {
      const {
        description: _ours,
        example: _ourExample,
        ...rules
      } = schemas.NewPlant.properties[field] as Record<string, unknown>;
      const {
        description: _theirs,
        example: _theirExample,
        ...plantRules
      } = schemas.Plant.properties[field] as Record<string, unknown>;
      expect(rules, field).toEqual(plantRules);
    }
    expect(schemas.Error.required?.sort()).toEqual(['error', 'message']);
    expect(schemas.Error.properties.error).toMatchObject({ type: 'integer', format: 'int32' });
    const limit = paths['/plants'].get!.parameters!.find((p) => 'name' in p && p.name === 'limit');
    expect(limit).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'integer', format: 'int32', minimum: 0 },
    });
    const id = paths['/plants/{id}'].delete!.parameters!.find(
      (p) => 'name' in p && p.name === 'id',
    );
    expect(id).toMatchObject({
      in: 'path',
      required: true,
      schema: { type: 'integer', format: 'int64' },
    });
  });

  it('documents every status code of the contract with its body', async () => {
    const { paths } = await served();
    const errorBody = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
    const expected: Array<[string, 'post' | 'get' | 'delete', string[]]> = [
      ['/plants', 'post', ['200', '400', '401', '409', '413', '415']],
      ['/plants', 'get', ['200', '400', '401']],
      ['/plants/{id}', 'delete', ['204', '400', '401', '404']],
    ];
    for (const [path, method, statuses] of expected) {
      const responses = paths[path][method]!.responses as Record<string, { content?: unknown }>;
      for (const status of statuses) {
        expect(responses[status], `${method} ${path} ${status}`).toBeDefined();
        if (Number(status) >= 400) expect(responses[status].content).toMatchObject(errorBody);
      }
    }
    expect(paths['/plants'].post!.responses['200']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Plant' } } },
    });
    expect(paths['/plants'].get!.responses['200']).toMatchObject({
      content: {
        'application/json': {
          schema: { type: 'array', items: { $ref: '#/components/schemas/Plant' } },
        },
      },
    });
    expect(
      (paths['/plants/{id}'].delete!.responses['204'] as { content?: unknown }).content,
    ).toBeUndefined();
    expect(paths['/plants'].post!.requestBody).toMatchObject({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
    });
  });

  it('declares X-Request-Id on every response, and the X-RateLimit-* headers on every success of an authenticated operation, as the service sends them', async () => {
    const { paths } = await served();
    const rateLimit = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const authenticated = (operation.security ?? []).length > 0;
        for (const [status, response] of Object.entries(
          operation.responses as Record<string, { headers?: Record<string, unknown> }>,
        )) {
          const where = `${method} ${path} ${status}`;
          const headers = Object.keys(response.headers ?? {});
          expect(response.headers?.['X-Request-Id'], where).toMatchObject({ required: true });
          if (authenticated && status.startsWith('2'))
            expect(headers, where).toEqual(expect.arrayContaining(rateLimit));
          else
            expect(
              headers.filter((name) => rateLimit.includes(name)),
              where,
            ).toEqual([]);
        }
      }
    }
    // Sent: X-Request-Id by every response the validated client checks (it is required);
    // the X-RateLimit-* headers by test/rate-limit.e2e-spec.ts, where rate limiting is on.
    const health = await t.current.http().get('/health/live');
    expect(health.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
