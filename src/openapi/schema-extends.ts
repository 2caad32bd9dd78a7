import type { OpenAPIObject } from '@nestjs/swagger';

interface ObjectSchema {
  required?: string[];
  properties?: Record<string, Record<string, unknown>>;
}

/** A property's rules: its schema less the words and examples that explain it. */
function rulesOf(property: Record<string, unknown>): string {
  const { description: _description, example: _example, ...rules } = property;
  return JSON.stringify(rules, Object.keys(rules).sort());
}

/**
 * Checks that the schema `name` is `base` plus fields of its own, the way the
 * specification defines NewPlant: "every field of Plant, with the same rules,
 * and one more field". The two come from separate DTOs, so this throws when
 * they have drifted apart: a base field missing, with other rules, or no
 * longer required.
 *
 * The schema stays one flat object rather than allOf [base, extra]: Swagger
 * UI shows such an allOf as "(any & object)" instead of its properties, and
 * code generators make an intersection type of it.
 */
export function assertSchemaExtends(document: OpenAPIObject, name: string, base: string): void {
  const schemas = (document.components?.schemas ?? {}) as Record<string, ObjectSchema>;
  const derived = schemas[name];
  const parent = schemas[base];
  if (!derived?.properties || !parent?.properties) {
    throw new Error(`assertSchemaExtends: ${name} and ${base} must both be object schemas`);
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
  if (problems.length > 0) throw new Error(`assertSchemaExtends: ${problems.join('; ')}`);
}
