import { describe, expect, it } from 'vitest';
import { textProblem } from './text.validators.js';

const NAME = { minCodePoints: 1, maxCodePoints: 255 };

describe('textProblem', () => {
  it('accepts any well-formed text up to the limit, counted in code points', () => {
    expect(textProblem('Fern', NAME)).toBeUndefined();
    expect(textProblem('🌵'.repeat(255), NAME)).toBeUndefined();
    expect(textProblem('a'.repeat(255), NAME)).toBeUndefined();
  });

  it.each([
    [5, /must be a string/],
    ['', /must not be empty/],
    ['a'.repeat(256), /at most 255 characters long \(it has 256\)/],
    ['🌵'.repeat(256), /it has 256/],
    ['a\u0000b', /NUL/],
    ['\ud800', /unpaired surrogate/],
    ['x\udc00', /unpaired surrogate/],
  ])('rejects %j', (value, message) => {
    expect(textProblem(value, NAME)).toMatch(message);
  });
});
