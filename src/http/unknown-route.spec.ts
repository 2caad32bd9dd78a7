import {
  BadRequestException,
  HttpException,
  NotFoundException,
  UnauthorizedException,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { instead401, isUnknownRoute, unknownRouteRefusal } from './unknown-route.js';

const request = (fields: Partial<FastifyRequest>) =>
  ({ is404: false, params: {}, method: 'POST', url: '/nope', ...fields }) as FastifyRequest;

describe('isUnknownRoute', () => {
  it('is true for a request no route matched', () => {
    expect(isUnknownRoute(request({ is404: true }))).toBe(true);
  });

  it('is true for `/plants/`, which matches `/plants/:id` with an empty id', () => {
    expect(isUnknownRoute(request({ params: { id: '' } }))).toBe(true);
  });

  it('is false for a route that matched with its parameters', () => {
    expect(isUnknownRoute(request({ params: { id: '5' } }))).toBe(false);
    expect(isUnknownRoute(request({ params: undefined }))).toBe(false);
  });
});

describe('unknownRouteRefusal', () => {
  it("turns a 401 into the 404 of an unknown route, in Nest's words and without a challenge", () => {
    const refusal = unknownRouteRefusal(
      new UnauthorizedException('a bearer token is required'),
      request({ method: 'OPTIONS', url: '/plants?limit=1' }),
    );
    expect(refusal).toBeInstanceOf(NotFoundException);
    expect((refusal as NotFoundException).message).toBe('Cannot OPTIONS /plants?limit=1');
  });

  it("leaves the failure budget's 429, a 400 and a failure of the service as they are", () => {
    const errors = [
      new HttpException('too many failed authentications', 429),
      new BadRequestException('send one Authorization header, not several'),
      new Error('ECONNREFUSED'),
    ];
    for (const error of errors) expect(unknownRouteRefusal(error, request({}))).toBe(error);
  });
});

describe('instead401', () => {
  it('answers a 401 with the refusal given, and leaves a 429, a 400 and a failure as they are', () => {
    const malformedUrl = new BadRequestException("'/%zz' is not a valid url component");
    expect(instead401(new UnauthorizedException('a bearer token is required'), malformedUrl)).toBe(
      malformedUrl,
    );
    const others = [
      new HttpException('too many', 429),
      new BadRequestException('two'),
      new Error('x'),
    ];
    for (const error of others) expect(instead401(error, malformedUrl)).toBe(error);
  });
});
