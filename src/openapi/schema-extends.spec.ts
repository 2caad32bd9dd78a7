import type { OpenAPIObject } from '@nestjs/swagger';
import { describe, expect, it } from 'vitest';
import { assertSchemaExtends } from './schema-extends.js';

const name = { type: 'string', minLength: 1, maxLength: 255 };
const tag = { type: 'string', maxLength: 255 };
const id = { type: 'integer', format: 'int64' };

function documentWith(newPlant: object): OpenAPIObject {
  return {
    openapi: '3.0.0',
    info: { title: 't', version: '1' },
    paths: {},
    components: {
      schemas: {
        Plant: { type: 'object', required: ['name'], properties: { name, tag } },
        NewPlant: newPlant,
      },
    },
  };
}

describe('assertSchemaExtends', () => {
  it('accepts the base plus fields of its own, other words aside, and leaves it flat', () => {
    const newPlant = {
      type: 'object',
      description: 'A new plant',
      required: ['id', 'name'],
      properties: { id, name: { ...name, description: 'other words', example: 'Fern' }, tag },
    };
    const document = documentWith(structuredClone(newPlant));
    assertSchemaExtends(document, 'NewPlant', 'Plant');
    expect(document.components!.schemas!.NewPlant).toEqual(newPlant);
  });

  it.each([
    ['NewPlant lacks Plant.tag', { required: ['id', 'name'], properties: { id, name } }],
    [
      'NewPlant.name has other rules than Plant.name',
      { required: ['id', 'name'], properties: { id, name: { ...name, maxLength: 10 }, tag } },
    ],
    ['NewPlant.name must be required', { required: ['id'], properties: { id, name, tag } }],
  ])('throws when %s', (problem, schema) => {
    expect(() =>
      assertSchemaExtends(documentWith({ type: 'object', ...schema }), 'NewPlant', 'Plant'),
    ).toThrow(`assertSchemaExtends: ${problem}`);
  });

  it('throws when either is not an object schema', () => {
    expect(() =>
      assertSchemaExtends(
        documentWith({ allOf: [{ $ref: '#/components/schemas/Plant' }] }),
        'NewPlant',
        'Plant',
      ),
    ).toThrow('assertSchemaExtends: NewPlant and Plant must both be object schemas');
  });
});
