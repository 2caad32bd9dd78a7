import type { FastifyRequest } from 'fastify';
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
 * Deepest nesting of arrays and objects a body may have. Every body this API
 * takes is flat; past this, the recursive layers after the parser (object
 * mapping, validation) would exhaust the stack and answer 500.
 */
export const MAX_JSON_DEPTH = 32;

/** Whether the JSON text nests arrays and objects deeper than `max`; one pass, strings skipped. */
function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c /* \ */) i += 1;
      else if (char === 0x22 /* " */) inString = false;
    } else if (char === 0x22) {
      inString = true;
    } else if (char === 0x5b /* [ */ || char === 0x7b /* { */) {
      depth += 1;
      if (depth > max) return true;
    } else if (char === 0x5d /* ] */ || char === 0x7d /* } */) {
      depth -= 1;
    }
  }
  return false;
}

/**
 * Parses a JSON request body without losing integer precision: integral
 * numbers become bigints (see parseJsonNumber), everything else is as
 * JSON.parse would give it. Invalid UTF-8, duplicate keys, prototype keys,
 * nesting deeper than MAX_JSON_DEPTH and a body that is not a JSON object are a 400.
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
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new BadRequestException(
      `request body is nested too deeply: at most ${MAX_JSON_DEPTH} levels of arrays and objects`,
    );
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

/**
 * The pipeline's parser for `application/json` bodies (Fastify's
 * content-type parser signature): JSON.parse would round integers above
 * 2^53, and ids need every digit.
 */
export function jsonBodyParser(
  request: FastifyRequest,
  body: Buffer,
  done: (error: Error | null, parsed?: unknown) => void,
): void {
  // DELETE takes no body; clients that always send a JSON Content-Type send an empty one.
  if (request.method === 'DELETE' && body.length === 0) {
    done(null, undefined);
    return;
  }
  let parsed: unknown;
  try {
    parsed = parseJsonBody(body);
  } catch (error) {
    done(error as Error);
    return;
  }
  done(null, parsed);
}
