/**
 * JSON Schemas of the 200 responses, for Fastify's compiled serializer
 * (fast-json-stringify) through @RouteSchema: it writes a Plant from its
 * known fields instead of walking it with JSON.stringify. Only `name` and
 * `tag` can come out, whatever else an object carries; an absent tag is left
 * out. Swagger's document comes from the DTO decorators, not from these.
 */
const plant = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    tag: { type: 'string' },
  },
  required: ['name'],
  additionalProperties: false,
} as const;

export const PLANT_RESPONSE_SCHEMA = { response: { 200: plant } };
export const PLANT_LIST_RESPONSE_SCHEMA = { response: { 200: { type: 'array', items: plant } } };
