import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { PinoNestLogger } from './pino-nest.logger.js';

function capture(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: new PinoNestLogger(pino({ level }, stream)), lines };
}

describe('PinoNestLogger', () => {
  it("writes Nest's context as `context` and the message as `msg`", () => {
    const { logger, lines } = capture();
    logger.log('listening', 'PlantStore');
    logger.warn('careful');
    expect(lines).toMatchObject([
      { level: 30, context: 'PlantStore', msg: 'listening' },
      { level: 40, msg: 'careful' },
    ]);
    expect(lines[1]).not.toHaveProperty('context');
  });

  it("turns Nest's error(message, stack, context) into err.stack", () => {
    const { logger, lines } = capture();
    const stack = new Error('no such table: plants').stack!;
    logger.error('GET /plants -> 500', stack, 'HttpError');
    expect(lines[0]).toMatchObject({ level: 50, context: 'HttpError', msg: 'GET /plants -> 500' });
    expect((lines[0].err as { stack: string }).stack).toBe(stack);
  });

  it('logs an Error as err, and an object as fields', () => {
    const { logger, lines } = capture();
    logger.error(new Error('boom'), 'Boot');
    logger.log({ owner: 'alice' }, 'Tokens');
    expect(lines[0]).toMatchObject({ level: 50, msg: 'boom', context: 'Boot' });
    expect((lines[0].err as { message: string }).message).toBe('boom');
    expect(lines[1]).toMatchObject({ owner: 'alice', context: 'Tokens' });
  });

  it('writes nothing below the level', () => {
    const { logger, lines } = capture('warn');
    logger.log('hidden');
    logger.debug('hidden');
    logger.verbose('hidden');
    logger.error('shown');
    expect(lines.map((line) => line.msg)).toEqual(['shown']);
  });
});
