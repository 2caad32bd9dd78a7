import { BadRequestException } from '@nestjs/common';
import { parse } from 'lossless-json';
import { parseJsonNumber } from './json-number.js';

/** Keys that could reach an object's prototype when the body is copied. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function rejectPrototypeKeys(this: unknown, key: string, value: unknown): unknown {
  if (FORBIDDEN_KEYS.has(key)) {
    throw new BadRequestException(`property ${key} is not allowed`);
  }
  return value;
}

/**
 * Parses a JSON request body without losing integer precision: integral
 * numbers become bigints (see parseJsonNumber), everything else is as
 * JSON.parse would give it. Invalid UTF-8, duplicate keys, prototype keys
 * and a body that is not a JSON object are a 400.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function parseJsonBody(body: Buffer | string): unknown {
  let text: string;
  try {
    text = typeof body === 'string' ? body : utf8.decode(body);
  } catch {
    throw new BadRequestException('request body is not valid UTF-8');
  }
  if (text.trim() === '') {
    throw new BadRequestException('request body is empty: send a JSON object');
  }
  let value: unknown;
  try {
    value = parse(text, rejectPrototypeKeys, parseJsonNumber);
  } catch (error) {
    if (error instanceof BadRequestException) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new BadRequestException(`request body is not valid JSON: ${reason}`);
  }
  // Every body this API takes is an object; say so rather than list its missing fields.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BadRequestException('request body must be a JSON object');
  }
  return value;
}
