/**
 * The contract's hot path as the hand-written reference does it: the body,
 * `limit` and path id checks, the Plant shape, the bearer header, the token
 * hash, the token lookup, the JSON body and the error answers, and the three
 * operations on a store, shared by the same-work and the bare reference
 * (server.ts) and the floor peer (bench/peers/floor).
 */
import { createHash, createHmac, createSecretKey, hkdfSync } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isInteger, parse } from 'lossless-json';
import type { ListedRow, PlantRow, Store } from './store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The token's owner, once the server has checked the token. */
    owner: string;
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const ID_RULE = `an integer from ${INT64_MIN} to ${INT64_MAX}`;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const plantSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, tag: { type: 'string' } },
  required: ['name'],
} as const;
const errorSchema = {
  type: 'object',
  properties: { error: { type: 'integer' }, message: { type: 'string' } },
} as const;

/** The response schemas of the list and of the create (Fastify serialises by them). */
export const listResponseSchema = {
  200: { type: 'array', items: plantSchema },
  '4xx': errorSchema,
} as const;
export const createResponseSchema = { 200: plantSchema, '4xx': errorSchema } as const;

const toPlant = (row: PlantRow) =>
  row.tag === null ? { name: row.name } : { name: row.name, tag: row.tag };

/**
 * The cursor key, derived from CURSOR_SECRET and held (a KeyObject) as the
 * service does it (src/http/page-cursor.ts).
 */
const CURSOR_KEY = createSecretKey(
  Buffer.from(
    hkdfSync(
      'sha256',
      process.env.CURSOR_SECRET ?? 'reference-cursor-secret-0123456789abcdef',
      Buffer.alloc(0),
      'plant-store page cursor v1',
      32,
    ),
  ),
);

/**
 * The Link header of a page that has a next one, with the service's cursor:
 * base64url of the list's kind, the last id and a truncated HMAC-SHA256 of both.
 */
function nextLink(limit: number, lastId: string): string {
  const body = Buffer.concat([Buffer.of(0x70), Buffer.from(lastId, 'utf8')]);
  const tag = createHmac('sha256', CURSOR_KEY).update(body).digest().subarray(0, 12);
  const cursor = Buffer.concat([body, tag]).toString('base64url');
  return `</plants?limit=${limit}&after=${cursor}>; rel="next"`;
}

function textProblem(value: unknown, min: number): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (!value.isWellFormed()) return 'must not contain an unpaired surrogate';
  if (value.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  let length = 0;
  for (const _ of value) length += 1;
  if (length < min) return 'must not be empty';
  if (length > 255) return 'must be at most 255 characters long';
  return undefined;
}

interface NewPlant {
  id: bigint;
  name: string;
  tag: string | null;
}

function newPlant(body: unknown): NewPlant {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'request body must be a JSON object');
  }
  const { id, name, tag = null, ...rest } = body as Record<string, unknown>;
  const problems = Object.keys(rest).map((key) => `property ${key} should not exist`);
  if (typeof id !== 'bigint' || id < INT64_MIN || id > INT64_MAX) {
    problems.push(`id must be ${ID_RULE}`);
  }
  const nameProblem = textProblem(name, 1);
  if (nameProblem) problems.push(`name ${nameProblem}`);
  const tagProblem = tag === null ? undefined : textProblem(tag, 0);
  if (tagProblem) problems.push(`tag ${tagProblem}`);
  if (problems.length > 0) throw new HttpError(400, problems.join('; '));
  return { id: id as bigint, name: name as string, tag: tag as string | null };
}

function limitOf(query: Record<string, unknown>): number {
  const { limit, ...rest } = query;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new HttpError(400, `property ${unknown[0]} should not exist`);
  if (limit === undefined) return 2_147_483_647;
  if (typeof limit !== 'string' || !/^\d{1,10}$/.test(limit) || Number(limit) > 2_147_483_647) {
    throw new HttpError(400, 'limit must be an integer from 0 to 2147483647');
  }
  return Number(limit);
}

function pathId(text: string): bigint {
  const id = /^-?\d{1,40}$/.test(text) ? BigInt(text) : undefined;
  if (id === undefined || id < INT64_MIN || id > INT64_MAX) {
    throw new HttpError(400, `id must be ${ID_RULE}`);
  }
  return id;
}

const challenge = (error?: string) => ({
  'www-authenticate': `Bearer realm="plants"${error ? `, error="${error}"` : ''}`,
});

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer ([^\s]+)$/.exec(header);
  return match?.[1];
}

const tokenHash = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** The owner of the request's bearer token, looked up in the store on every request; else a 401. */
export async function ownerOf(store: Store, request: FastifyRequest): Promise<string> {
  const token = bearerToken(request.headers.authorization);
  if (token === undefined) throw new HttpError(401, 'a bearer token is required', challenge());
  const owner = await store.ownerOf(tokenHash(token));
  if (owner === undefined) {
    throw new HttpError(401, 'the bearer token is unknown or revoked', challenge('invalid_token'));
  }
  return owner;
}

/** A request's `owner`, and JSON as the one body type (else Fastify's 415), parsed by parseJsonBody. */
export function acceptJsonWithOwner(app: FastifyInstance): void {
  app.decorateRequest('owner', '');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
}

/** Answers `error` in the contract's words (errorAnswer), logging a 500's cause. */
export function sendError(reply: FastifyReply, error: unknown, clientStatus: number | undefined) {
  const answer = errorAnswer(error, clientStatus);
  if (answer.status === 500) reply.log.error(error);
  void reply.code(answer.status).headers(answer.headers).send(answer.body);
}

/**
 * Fastify's content-type parser for application/json (`parseAs: 'string'`): integers
 * as bigints, so that no id above 2^53 is rounded; malformed JSON a 400.
 */
function parseJsonBody(
  _request: unknown,
  body: string | Buffer,
  done: (error: Error | null, parsed?: unknown) => void,
): void {
  let parsed: unknown;
  try {
    parsed = parse(body as string, null, (text) => (isInteger(text) ? BigInt(text) : Number(text)));
  } catch (error) {
    done(new HttpError(400, `request body is not valid JSON: ${(error as Error).message}`));
    return;
  }
  done(null, parsed);
}

/**
 * The contract's answer to an error: an HttpError as it says; another error
 * with a client status (`clientStatus`, from the framework) with its own
 * message; anything else a 500 that says nothing of its cause.
 */
function errorAnswer(error: unknown, clientStatus: number | undefined) {
  const status =
    error instanceof HttpError
      ? error.status
      : clientStatus && clientStatus < 500
        ? clientStatus
        : 500;
  const message = status === 500 ? 'internal server error' : (error as Error).message;
  const headers = error instanceof HttpError ? error.headers : {};
  return { status, headers, body: { error: status, message } };
}

/** A page of the owner's plants: one row more than asked says whether a next link is due. */
export async function listPlants(
  store: Store,
  owner: string,
  query: Record<string, unknown>,
): Promise<{ plants: ReturnType<typeof toPlant>[]; link?: string }> {
  const limit = limitOf(query);
  const rows: ListedRow[] = await store.list(owner, limit + 1);
  if (rows.length <= limit) return { plants: rows.map(toPlant) };
  return { plants: rows.slice(0, limit).map(toPlant), link: nextLink(limit, rows[limit - 1].id) };
}

/** 200 with the plant; an exact replay 200 too; the id taken by another plant 409. */
export async function createPlant(store: Store, owner: string, body: unknown) {
  const plant = newPlant(body);
  // The plant-created event's body, the NewPlant with its exact id, as the service stores it.
  const tagPart = plant.tag === null ? '' : `,"tag":${JSON.stringify(plant.tag)}`;
  const event = `{"id":${plant.id},"name":${JSON.stringify(plant.name)}${tagPart}}`;
  if (await store.insert(owner, plant.id, plant.name, plant.tag, event)) return toPlant(plant);
  const existing = await store.find(owner, plant.id);
  if (existing && existing.name === plant.name && existing.tag === plant.tag) {
    return toPlant(existing);
  }
  throw new HttpError(
    409,
    `a plant with id ${plant.id} already exists with a different name or tag`,
  );
}

export async function deletePlant(store: Store, owner: string, idText: string): Promise<void> {
  const id = pathId(idText);
  if (!(await store.remove(owner, id))) throw new HttpError(404, `no plant with id ${id}`);
}
