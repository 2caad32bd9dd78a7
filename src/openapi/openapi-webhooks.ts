import type { OpenAPIObject } from '@nestjs/swagger';

type WebhooksObject = NonNullable<OpenAPIObject['webhooks']>;

/**
 * The document's `webhooks` section (OpenAPI 3.1): requests the service
 * sends rather than receives, which no controller route describes. A
 * feature that sends some provides this class (see WebhooksModule);
 * buildOpenApiDocument adds what it declares.
 */
export abstract class OpenApiWebhooks {
  abstract readonly webhooks: WebhooksObject;
}

/**
 * Adds the section. @nestjs/swagger writes an OpenAPI 3.0 document, which
 * has no `webhooks`; the schemas it generates (no `nullable`, no boolean
 * `exclusiveMinimum`) are valid 3.1 as they are, so the version is raised.
 */
export function addWebhooksSection(document: OpenAPIObject, webhooks: WebhooksObject): void {
  document.openapi = '3.1.0';
  document.webhooks = webhooks;
}
