import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ErrorDto } from './error.dto.js';

const DESCRIPTIONS = {
  400: 'The request is invalid; the message says which field and why',
  401: 'No bearer token, or the token is unknown or revoked (see WWW-Authenticate)',
  500: 'An unexpected fault; the cause is logged, never sent',
  503: 'The database is unavailable; retry after the Retry-After seconds',
};

type SharedStatus = keyof typeof DESCRIPTIONS;

const HEADERS: Partial<
  Record<SharedStatus, Record<string, { description: string; schema: { type: 'string' } }>>
> = {
  401: {
    'WWW-Authenticate': {
      description:
        'Bearer realm="plants", with error="invalid_token" when the token is unknown or revoked',
      schema: { type: 'string' },
    },
  },
  503: {
    'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'string' } },
  },
};

/** Documents the Error responses that several operations share. */
export function ApiErrorResponses(...statuses: SharedStatus[]): MethodDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        type: ErrorDto,
        description: DESCRIPTIONS[status],
        headers: HEADERS[status],
      }),
    ),
  );
}

/** The errors every authenticated operation can answer. */
export const COMMON_ERRORS: SharedStatus[] = [400, 401, 500, 503];
