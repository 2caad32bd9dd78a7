import { describe, expect, it } from 'vitest';
import { plantCreatedEvent } from './plant-created.outbox.js';

describe('plantCreatedEvent', () => {
  it('is the NewPlant as stored: the exact int64 id as a JSON number, the tag left out when none', () => {
    expect(plantCreatedEvent({ id: 2n ** 63n - 1n, name: 'Ivy "Hedera"', tag: 'vine' })).toBe(
      '{"id":9223372036854775807,"name":"Ivy \\"Hedera\\"","tag":"vine"}',
    );
    expect(plantCreatedEvent({ id: -(2n ** 63n), name: 'Fern', tag: null })).toBe(
      '{"id":-9223372036854775808,"name":"Fern"}',
    );
    expect(JSON.parse(plantCreatedEvent({ id: 1n, name: 'ü\u2028', tag: '' }))).toEqual({
      id: 1,
      name: 'ü\u2028',
      tag: '',
    });
  });
});
