import { type ArgumentMetadata, BadRequestException } from '@nestjs/common';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { DtoValidationPipe } from './validation.pipe.js';

class PotDto {
  @IsString()
  @MaxLength(3)
  size!: string;

  @IsOptional()
  @IsString()
  colour?: string;
}

const pipe = new DtoValidationPipe();
const body = (value: unknown) =>
  pipe.transform(value, { type: 'body', metatype: PotDto, data: undefined });
const rejection = (value: unknown) => {
  try {
    body(value);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestException);
    return (error as BadRequestException).message;
  }
  throw new Error(`${JSON.stringify(value)} was accepted`);
};

describe('DtoValidationPipe', () => {
  it('hands on a valid body as an instance of its DTO, with the values as they came', () => {
    const pot = body({ size: 'L', colour: 'red' });
    expect(pot).toBeInstanceOf(PotDto);
    expect(pot).toEqual({ size: 'L', colour: 'red' });
  });

  it('names every broken rule and every unknown property, one message each', () => {
    expect(rejection({ size: 'XXXL', glaze: 'matte' })).toBe(
      'property glaze should not exist; size must be shorter than or equal to 3 characters',
    );
    // stopAtFirstError: one message per property, even when it breaks both rules.
    expect(rejection({})).toBe('size must be shorter than or equal to 3 characters');
  });

  it('refuses a property named like an inherited member, and never takes its prototype', () => {
    const hostile = JSON.parse('{"size": "L", "__proto__": {"admin": true}, "toString": 1}');
    expect(rejection(hostile)).toBe(
      'property __proto__ should not exist; property toString should not exist',
    );
    expect(({} as { admin?: boolean }).admin).toBeUndefined();
  });

  it('refuses a value that is not an object where a DTO is expected', () => {
    for (const value of [null, undefined, 'L', 3, [{ size: 'L' }]]) {
      expect(rejection(value)).toBe('the body must be a JSON object');
    }
  });

  it('leaves alone what is not a DTO: custom decorators, primitives, untyped values', () => {
    const untouched: ArgumentMetadata[] = [
      { type: 'custom', metatype: PotDto },
      { type: 'param', metatype: BigInt as unknown as ArgumentMetadata['metatype'], data: 'id' },
      { type: 'query', metatype: Number, data: 'limit' },
      { type: 'query', metatype: Object },
      { type: 'body' },
    ];
    for (const metadata of untouched) {
      const value = { anything: 'goes' };
      expect(pipe.transform(value, metadata)).toBe(value);
    }
  });
});
