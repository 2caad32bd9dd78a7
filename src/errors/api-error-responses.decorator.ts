import { applyDecorators } from '@nestjs/common';
import { ApiResponse, type HeaderObject } from '@nestjs/swagger';
import { ErrorDto } from './error.dto.js';
import { PARAMETER_TOO_LONG } from './error-response.js';
import { NOT_UTF8 } from '../http/content-charset.js';
import { NOT_IDENTITY } from '../http/content-encoding.js';

/** Sent with every 429 and 503 (see error-response.ts and TooManyRequestsException). */
const RETRY_AFTER: Record<string, HeaderObject> = {
  'Retry-After': {
    description: 'Seconds to wait before retrying',
    required: true,
    schema: { type: 'string' },
  },
};

interface ErrorStatusDoc {
  description: string;
  headers?: Record<string, HeaderObject>;
  /** Messages the service really sends with this status, whatever the operation. */
  messages?: string[];
}

const ERRORS = {
  400: { description: 'The request is invalid; the message says which field and why' },
  401: {
    description: 'No bearer token, or the token is unknown or revoked (see WWW-Authenticate)',
    headers: {
      'WWW-Authenticate': {
        description:
          'Bearer realm="plants", with error="invalid_token" when the token is unknown or revoked',
        required: true,
        schema: { type: 'string' },
      },
    },
    messages: [
      'a bearer token is required: send "Authorization: Bearer <token>"',
      'the bearer token is unknown or revoked',
    ],
  },
  403: {
    description:
      "The token lacks the scope the operation needs: an opaque token issued with fewer scopes, or an identity provider's access token when scopes are required (see WWW-Authenticate)",
    headers: {
      'WWW-Authenticate': {
        description:
          'Bearer realm="plants", error="insufficient_scope", and the scope the operation needs, e.g. scope="plants:write"',
        required: true,
        schema: { type: 'string' },
      },
    },
  },
  404: { description: 'The caller has no plant (or webhook subscription) with this id' },
  409: {
    description:
      'The request conflicts with what exists: a plant id already used for a different plant, or a webhook subscription the limit or an existing one forbids',
  },
  413: {
    description: 'The body is larger than the limit',
    messages: ['request body is too large'],
  },
  414: {
    description: 'A path parameter is longer than the router takes (100 characters)',
    messages: [PARAMETER_TOO_LONG],
  },
  415: {
    description:
      'The body is not application/json, is JSON in a charset other than UTF-8, or is in a Content-Encoding other than identity',
    messages: [
      'unsupported Content-Type: send the body as application/json',
      NOT_UTF8,
      NOT_IDENTITY,
    ],
  },
  429: {
    description:
      "The token owner's request budget, or this client's failed-authentication budget, is spent; retry after the Retry-After seconds",
    headers: RETRY_AFTER,
    messages: [
      'too many requests: retry after the number of seconds in Retry-After',
      'too many failed authentications from this client: retry after the number of seconds in Retry-After',
    ],
  },
  500: {
    description: 'An unexpected fault; the cause is logged, never sent',
    messages: ['internal server error'],
  },
  503: {
    description:
      "The database is unavailable, or (JWT callers) the identity provider's keys cannot be fetched; retry after the Retry-After seconds",
    headers: RETRY_AFTER,
    messages: [
      'the database is unavailable; retry the request later',
      "the identity provider's signing keys cannot be fetched: retry after the number of seconds in Retry-After",
    ],
  },
} satisfies Record<number, ErrorStatusDoc>;

type ErrorStatus = keyof typeof ERRORS;

/**
 * The Error responses of one operation, keyed by status. A status maps to the
 * messages the operation sends with it (shown as examples), or to `true` for
 * the service-wide messages of that status.
 */
export type OperationErrors = { [S in ErrorStatus]?: true | string[] };

function examplesOf(status: number, messages: string[]) {
  return Object.fromEntries(
    messages.map((message, i) => [
      `${status}-${i + 1}`,
      { summary: message, value: new ErrorDto(status, message) },
    ]),
  );
}

/** Documents each Error response of an operation, with its headers and example bodies. */
export function ApiErrorResponses(errors: OperationErrors): MethodDecorator {
  return applyDecorators(
    ...Object.entries(errors).map(([key, given]) => {
      const status = Number(key) as ErrorStatus;
      const doc: ErrorStatusDoc = ERRORS[status];
      const messages = given === true ? doc.messages : given;
      if (!messages?.length) throw new Error(`Error ${status} needs example messages`);
      return ApiResponse({
        status,
        type: ErrorDto,
        description: doc.description,
        headers: doc.headers,
        examples: examplesOf(status, messages),
      });
    }),
  );
}
