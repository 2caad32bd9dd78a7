import type { OpenAPIObject } from '@nestjs/swagger';

/** The committed form of the document: stable, two-space JSON with a final newline. */
export function serializeOpenApiDocument(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
