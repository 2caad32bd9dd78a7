import {
  BadRequestException,
  HttpException,
  NotFoundException,
  UnauthorizedException,
} from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { toErrorResponse } from './error-response.js';

const queryError = (driverError: object) =>
  new QueryFailedError(
    'SELECT secret FROM plants',
    [],
    Object.assign(new Error('driver says: relation "plants"'), driverError),
  );

describe('toErrorResponse', () => {
  it('keeps the status and message of HTTP exceptions, joining validation messages', () => {
    expect(toErrorResponse(new NotFoundException('no plant with id 1'))).toMatchObject({
      status: 404,
      body: { error: 404, message: 'no plant with id 1' },
      logCause: false,
    });
    expect(toErrorResponse(new BadRequestException(['a is bad', 'b is bad'])).body.message).toBe(
      'a is bad; b is bad',
    );
  });

  it('adds the headers an exception asks for', () => {
    class ChallengeException extends UnauthorizedException {
      responseHeaders() {
        return { 'WWW-Authenticate': 'Bearer realm="plants", error="invalid_token"' };
      }
    }
    const response = toErrorResponse(new ChallengeException('the token is unknown'));
    expect(response.status).toBe(401);
    expect(response.headers).toEqual({
      'WWW-Authenticate': 'Bearer realm="plants", error="invalid_token"',
    });
  });

  it('words Fastify errors (raw or wrapped by Nest) for clients', () => {
    const tooLarge = Object.assign(new Error('Request body is too large'), {
      code: 'FST_ERR_CTP_BODY_TOO_LARGE',
      statusCode: 413,
    });
    expect(toErrorResponse(tooLarge).body).toEqual({
      error: 413,
      message: 'request body is too large',
    });
    const wrapped = new HttpException('Unsupported Media Type', 415, {
      cause: Object.assign(new Error('Unsupported Media Type'), {
        code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
        statusCode: 415,
      }),
    });
    expect(toErrorResponse(wrapped).body.message).toMatch(/application\/json/);
  });

  it('maps unique violations of both databases to 409', () => {
    expect(toErrorResponse(queryError({ code: '23505' })).status).toBe(409);
    expect(toErrorResponse(queryError({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' })).status).toBe(409);
  });

  it('maps an unreachable or locked database to 503 with Retry-After, and logs it', () => {
    for (const cause of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      new Error('Connection terminated unexpectedly'),
      queryError({ code: 'SQLITE_BUSY' }),
      queryError({ code: '57P01' }),
    ]) {
      const response = toErrorResponse(cause);
      expect(response.status, String(cause)).toBe(503);
      expect(response.headers).toEqual({ 'Retry-After': '1' });
      expect(response.logCause).toBe(true);
    }
  });

  it('answers anything else with a bare 500 that reveals nothing of its cause', () => {
    for (const cause of [
      queryError({ code: '42P01' }),
      new TypeError('x is undefined'),
      'a string',
      undefined,
    ]) {
      const response = toErrorResponse(cause);
      expect(response).toMatchObject({
        status: 500,
        body: { error: 500, message: 'internal server error' },
        logCause: true,
      });
    }
    expect(
      toErrorResponse(new HttpException('database password is hunter2', 502)).body.message,
    ).toBe('internal server error');
  });
});
