import type { OpenAPIObject } from '@nestjs/swagger';

interface ObjectSchema {
  type?: string;
  description?: string;
  required?: string[];
  properties?: Record<string, Record<string, unknown>>;
  allOf?: unknown[];
}

/** A property's rules: its schema less the words and examples that explain it. */
function rulesOf(property: Record<string, unknown>): string {
  const { description: _description, example: _example, ...rules } = property;
  return JSON.stringify(rules, Object.keys(rules).sort());
}

/**
 * Rewrites the schema `name` as `base` plus what it adds (allOf), the way the
 * specification defines NewPlant: "every field of Plant, with the same rules,
 * and one more field". @nestjs/swagger writes every DTO as a flat object, so
 * this checks that the flat schema really is the base plus extra fields
 * (same rules, and the base's required fields still required) and throws
 * when the DTOs have drifted apart.
 */
export function composeSchema(document: OpenAPIObject, name: string, base: string): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, ObjectSchema>;
  const derived = schemas[name];
  const parent = schemas[base];
  if (!derived?.properties || !parent?.properties) {
    throw new Error(`composeSchema: ${name} and ${base} must both be object schemas`);
  }
  const problems: string[] = [];
  for (const [key, property] of Object.entries(parent.properties)) {
    const own = derived.properties[key];
    if (!own) problems.push(`${name} lacks ${base}.${key}`);
    else if (rulesOf(own) !== rulesOf(property)) {
      problems.push(`${name}.${key} has other rules than ${base}.${key}`);
    }
  }
  for (const key of parent.required ?? []) {
    if (!derived.required?.includes(key)) problems.push(`${name}.${key} must be required`);
  }
  if (problems.length > 0) throw new Error(`composeSchema: ${problems.join('; ')}`);

  const added = Object.keys(derived.properties).filter((key) => !(key in parent.properties!));
  const addedRequired = (derived.required ?? []).filter((key) => added.includes(key));
  schemas[name] = {
    ...(derived.description === undefined ? {} : { description: derived.description }),
    allOf: [
      { $ref: `#/components/schemas/${base}` },
      {
        type: 'object',
        ...(addedRequired.length > 0 ? { required: addedRequired } : {}),
        properties: Object.fromEntries(added.map((key) => [key, derived.properties![key]])),
      },
    ],
  };
}
