import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, parseJsonBody } from './lossless-json.parser.js';

const badRequest = (body: string | Buffer): string => {
  try {
    parseJsonBody(body);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestException);
    return (error as BadRequestException).message;
  }
  throw new Error('expected a BadRequestException');
};

describe('parseJsonBody', () => {
  it('keeps every digit of large integers and leaves fractions as numbers', () => {
    expect(parseJsonBody('{"id": 9007199254740993, "x": 1.5, "n": "s"}')).toEqual({
      id: 9007199254740993n,
      x: 1.5,
      n: 's',
    });
  });

  it('gives unpaired surrogate escapes through as they are (validation rejects them)', () => {
    const body = parseJsonBody('{"name": "\\ud800"}') as { name: string };
    expect(body.name).toBe('\ud800');
  });

  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['{"a": ', /not valid JSON/],
    ['{"a": 1, "a": 2}', /Duplicate key/],
    ['[1, 2]', /must be a JSON object/],
    ['"text"', /must be a JSON object/],
    ['null', /must be a JSON object/],
    ['{"__proto__": {"polluted": true}}', /__proto__ is not allowed/],
    ['{"a": {"constructor": {"prototype": {}}}}', /(constructor|prototype) is not allowed/],
  ])('rejects %j with a 400', (body, message) => {
    expect(badRequest(body)).toMatch(message);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('rejects nesting deeper than MAX_JSON_DEPTH, counting only brackets outside strings', () => {
    const nested = (depth: number) => '{"a":'.repeat(depth - 1) + '[1]' + '}'.repeat(depth - 1);
    expect(parseJsonBody(nested(MAX_JSON_DEPTH))).toBeTypeOf('object');
    expect(badRequest(nested(MAX_JSON_DEPTH + 1))).toMatch(/nested too deeply/);
    expect(badRequest(`{"tag": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`)).toMatch(
      /nested too deeply/,
    );
    const brackets = JSON.stringify(`${'[{'.repeat(100)}\\"${'['.repeat(100)}`);
    expect(parseJsonBody(`{"name": ${brackets}}`)).toEqual({ name: JSON.parse(brackets) });
  });

  it('rejects bytes that are not UTF-8', () => {
    expect(badRequest(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).toMatch(/UTF-8/);
  });
});
