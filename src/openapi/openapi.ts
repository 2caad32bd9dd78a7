import type { INestApplication } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { assertSchemaExtends } from './schema-extends.js';
import { addWebhooksSection, OpenApiWebhooks } from './openapi-webhooks.js';
import { declarePipelineHeaders } from './response-headers.js';
import { markPublic } from '../http/public.decorator.js';

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Plant Store')
    .setDescription(
      "Keeps a collection of plants for authenticated clients: create a plant, list the caller's plants, read one, delete one, " +
        'and subscribe to webhooks that send each new plant. ' +
        'The plants and webhooks operations require a bearer token (bearerAuth). ' +
        'The health probes (/health/live, /health/ready) need none, nor do this document (/docs, /docs-json, /docs-yaml) ' +
        'and the Prometheus metrics at /metrics (unless METRICS_ENABLED=false), which the document does not list. ' +
        'Every error is an Error object whose `error` is the HTTP status.',
    )
    .setVersion('1.0.0')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        description:
          'An opaque API token (pst_…) issued with `npm run -s token -- create --owner <name> [--scope <scope>]...`, ' +
          'or, when the service is configured with an OpenID Connect issuer, a JWT access token from that identity provider. ' +
          'Scopes: `plants:read` (GET /plants, GET /plants/{id}), `plants:write` (POST /plants, DELETE /plants/{id}), `webhooks:manage` (/webhooks). ' +
          'An opaque token holds all three unless issued with fewer; a JWT is checked for them when AUTH_JWT_REQUIRE_SCOPES=true. ' +
          'A missing scope is a 403 with WWW-Authenticate: Bearer error="insufficient_scope" and the scope the operation needs, e.g. scope="plants:write"',
      },
      'bearerAuth',
    )
    // Relative: Swagger UI and clients call the server that serves the document.
    .addServer('/', 'The server that serves this document')
    .addTag('health', 'Liveness and readiness probes for orchestrators (public)')
    .addTag('plants', "Create, list, read and delete the caller's plants (bearer token required)")
    .addTag(
      'webhooks',
      "Subscribe to events about the caller's plants: each new plant is sent to the subscription's URL (see the webhooks section; bearer token required)",
    )
    .build();
  const document = SwaggerModule.createDocument(app, config);
  assertSchemaExtends(document, 'NewPlant', 'Plant');
  declarePipelineHeaders(document);
  addWebhooksSection(document, app.get(OpenApiWebhooks).webhooks);
  return document;
}

const DOCUMENT_PATHS = ['/docs', '/docs-json', '/docs-yaml'];

/** Swagger UI at /docs, the document at /docs-json and /docs-yaml; public routes. */
export function setupOpenApi(app: NestFastifyApplication): void {
  // Swagger registers these on Fastify itself: no handler for @Public() to mark.
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRoute', (route) => {
      if (DOCUMENT_PATHS.some((path) => route.url === path || route.url.startsWith(`${path}/`))) {
        route.config = markPublic(route.config as Record<string, unknown> | undefined);
      }
    });
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
  });
}
