import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { OpenAPIObject } from '@nestjs/swagger';

// ajv-formats is CommonJS; from ESM its function is the `default` of module.exports.
const addFormats = ajvFormats.default;

/** A response as any client received it: supertest, fetch or the browser. */
export interface ReceivedResponse {
  method: string;
  /** The request URL as sent: a path with an optional query, or an absolute URL. */
  url: string;
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /** The body as text ('' when there is none). */
  text: string;
}

type Schema = Record<string, unknown>;

interface MediaType {
  schema?: Schema;
}
interface ResponseDoc {
  content?: Record<string, MediaType>;
  headers?: Record<string, { required?: boolean }>;
}
interface OperationDoc {
  operationId?: string;
  responses: Record<string, ResponseDoc>;
}

/** The routes @nestjs/swagger serves itself: the document and Swagger UI, not operations of it. */
const DOCUMENTATION_ROUTE = /^\/docs(?:-json|-yaml|\/.*)?$/;
/** The Prometheus scrape route: plain text for operators, deliberately not an API operation. */
const METRICS_ROUTE = /^\/metrics$/;

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/**
 * Every object schema that lists its properties forbids any other: the
 * document leaves additionalProperties open (clients should tolerate new
 * fields), but the service must not send fields it does not document.
 * Meant for response schemas only; NewPlant (Plant plus id through allOf)
 * would not validate against a closed Plant, and responses never carry it.
 */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy: Schema = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, closed(value)]),
  );
  if (copy.properties !== undefined && copy.additionalProperties === undefined) {
    copy.additionalProperties = false;
  }
  if (typeof copy.$ref === 'string') {
    copy.$ref = copy.$ref.replace('#/components/schemas/', 'openapi.json#/$defs/');
  }
  return copy;
}

function headerValue(headers: ReceivedResponse['headers'], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

function pathOf(url: string): string {
  return new URL(url, 'http://service.invalid').pathname;
}

function templateRegExp(template: string): RegExp {
  const pattern = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}$`);
}

/**
 * Checks responses against an OpenAPI document: the status is documented for
 * the operation, the Content-Type is the documented media type, the body is
 * valid against its schema with no undocumented field (Ajv, with the
 * document's formats), a response documented without content has no body,
 * and every header documented as required is there.
 */
export class OpenApiResponseValidator {
  private readonly ajv: Ajv;
  private readonly compiled = new Map<Schema, ValidateFunction>();
  private readonly paths: Array<{ template: string; regexp: RegExp }>;

  constructor(readonly document: OpenAPIObject) {
    this.ajv = new Ajv({ allErrors: true, strict: true });
    addFormats(this.ajv);
    // OpenAPI's own formats and annotation keyword (section 4.7.3 / 4.7.24.1).
    this.ajv.addFormat('int32', {
      type: 'number',
      validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
    });
    this.ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
    this.ajv.addKeyword('example');
    this.ajv.addSchema({ $id: 'openapi.json', $defs: closed(document.components?.schemas ?? {}) });
    // Literal paths win over templates, as routers match them.
    this.paths = Object.keys(document.paths)
      .map((template) => ({ template, regexp: templateRegExp(template) }))
      .sort((a, b) => Number(a.template.includes('{')) - Number(b.template.includes('{')));
  }

  /** The document's operation for a method and URL, if it has one. */
  operation(
    method: string,
    url: string,
  ): { template: string; operation: OperationDoc } | undefined {
    const path = pathOf(url);
    const lower = method.toLowerCase();
    for (const { template, regexp } of this.paths) {
      if (!regexp.test(path)) continue;
      const item = this.document.paths[template] as Record<string, unknown>;
      if (HTTP_METHODS.has(lower) && item[lower]) {
        return { template, operation: item[lower] as OperationDoc };
      }
    }
    return undefined;
  }

  /** What is wrong with a response; empty when it is as documented. */
  problems(response: ReceivedResponse): string[] {
    const path = pathOf(response.url);
    const where = `${response.method.toUpperCase()} ${path} -> ${response.status}`;
    if (DOCUMENTATION_ROUTE.test(path)) {
      // Served by @nestjs/swagger (test/openapi.e2e-spec.ts checks their content).
      return response.status < 400 ? [] : [`${where}: the documentation route failed`];
    }
    if (METRICS_ROUTE.test(path) && response.method === 'get') {
      // 404 when METRICS_ENABLED=false, in the Error shape like any unknown route.
      if (response.status === 404)
        return this.bodyProblems(where, response, { content: this.errorContent() });
      const type = String(headerValue(response.headers, 'content-type') ?? '');
      return response.status === 200 && type.startsWith('text/plain')
        ? []
        : [`${where}: not a Prometheus scrape`];
    }
    if (response.method === 'options' && response.status === 204) {
      // A CORS preflight, answered by @fastify/cors before any operation: no body.
      return response.text === '' ? [] : [`${where}: a preflight answer with a body`];
    }
    const found = this.operation(response.method, response.url);
    if (!found) {
      // Not an operation: the contract's unknown route, a 404 in the Error shape
      // (or a 400 for a URL that cannot be decoded).
      if (response.status !== 404 && response.status !== 400) {
        return [`${where}: no documented operation, and not a 404 for an unknown route`];
      }
      return this.bodyProblems(where, response, { content: this.errorContent() });
    }
    const { operation } = found;
    const documented =
      operation.responses[String(response.status)] ??
      operation.responses[`${String(response.status)[0]}XX`] ??
      operation.responses.default;
    if (!documented) {
      return [
        `${where}: status ${response.status} is not documented for ${operation.operationId} ` +
          `(documented: ${Object.keys(operation.responses).join(', ')})`,
      ];
    }
    const problems = this.bodyProblems(where, response, documented);
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      if (header.required && headerValue(response.headers, name) === undefined) {
        problems.push(`${where}: the required header ${name} is missing`);
      }
    }
    return problems;
  }

  /** Throws with every problem of a response; the message names the request. */
  check(response: ReceivedResponse): void {
    const problems = this.problems(response);
    if (problems.length > 0) {
      throw new Error(
        `The response does not match openapi.json:\n  ${problems.join('\n  ')}\n` +
          `Body: ${response.text.slice(0, 500)}`,
      );
    }
  }

  private errorContent(): Record<string, MediaType> {
    return { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
  }

  private bodyProblems(
    where: string,
    response: ReceivedResponse,
    documented: ResponseDoc,
  ): string[] {
    const contentType = headerValue(response.headers, 'content-type');
    if (!documented.content) {
      return response.text === '' && contentType === undefined
        ? []
        : [`${where}: documented without a body, but has ${contentType ?? 'one'}`];
    }
    const mediaType = contentType?.split(';')[0].trim().toLowerCase();
    const media = mediaType === undefined ? undefined : documented.content[mediaType];
    if (!media) {
      return [
        `${where}: Content-Type ${contentType ?? '(none)'} is not documented ` +
          `(documented: ${Object.keys(documented.content).join(', ')})`,
      ];
    }
    if (!media.schema) return [];
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      return [`${where}: the body is not JSON`];
    }
    const validate = this.validator(media.schema);
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (error) =>
        `${where}: body${error.instancePath} ${error.message ?? 'is invalid'} ${JSON.stringify(error.params)}`,
    );
  }

  private validator(schema: Schema): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(closed(schema) as Schema);
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}

export function readCommittedDocument(): OpenAPIObject {
  return JSON.parse(readFileSync(resolve('openapi.json'), 'utf8')) as OpenAPIObject;
}

let committed: OpenApiResponseValidator | undefined;

/**
 * The validator of the committed openapi.json, which test/openapi.e2e-spec.ts
 * keeps equal to what the code generates.
 */
export function documentedResponses(): OpenApiResponseValidator {
  committed ??= new OpenApiResponseValidator(readCommittedDocument());
  return committed;
}

/** Checks a fetch() Response (its body is read from a clone, so the caller can still read it). */
export async function checkFetchResponse(
  method: string,
  url: string,
  response: Response,
  validator: OpenApiResponseValidator = documentedResponses(),
): Promise<void> {
  validator.check({
    method,
    url,
    status: response.status,
    headers: Object.fromEntries(response.headers),
    text: await response.clone().text(),
  });
}
