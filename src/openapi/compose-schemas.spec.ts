import type { OpenAPIObject } from '@nestjs/swagger';
import { describe, expect, it } from 'vitest';
import { composeSchema } from './compose-schemas.js';

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

describe('composeSchema', () => {
  it('rewrites a flat schema as its base plus the fields it adds (allOf)', () => {
    const document = documentWith({
      type: 'object',
      description: 'A new plant',
      required: ['id', 'name'],
      properties: { id, name: { ...name, description: 'other words' }, tag },
    });
    composeSchema(document, 'NewPlant', 'Plant');
    expect(document.components!.schemas!.NewPlant).toEqual({
      description: 'A new plant',
      allOf: [
        { $ref: '#/components/schemas/Plant' },
        { type: 'object', required: ['id'], properties: { id } },
      ],
    });
  });

  it.each([
    ['a field of the base is missing', { required: ['id', 'name'], properties: { id, name } }],
    [
      'a field has other rules',
      { required: ['id', 'name'], properties: { id, name: { ...name, maxLength: 10 } } },
    ],
    [
      'a required field of the base is optional',
      { required: ['id'], properties: { id, name, tag } },
    ],
  ])('throws when %s', (_, schema) => {
    expect(() =>
      composeSchema(documentWith({ type: 'object', ...schema }), 'NewPlant', 'Plant'),
    ).toThrow(/composeSchema: NewPlant/);
  });
});
