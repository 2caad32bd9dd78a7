import type { ExecutionContext } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { PerRoute } from './per-route.js';

class Cats {
  list(): void {}
  create(): void {}
}
class Dogs extends Cats {}

const route = (classRef: typeof Cats, handler: () => void) =>
  ({ getClass: () => classRef, getHandler: () => handler }) as unknown as ExecutionContext;

describe('PerRoute', () => {
  it('works a value out once per class and handler, and keeps it', () => {
    const seen: string[] = [];
    const names = new PerRoute((handler, classRef) => {
      seen.push(`${classRef.name}.${handler.name}`);
      return seen.length;
    });
    expect(names.get(route(Cats, Cats.prototype.list))).toBe(1);
    expect(names.get(route(Cats, Cats.prototype.list))).toBe(1);
    expect(names.get(route(Cats, Cats.prototype.create))).toBe(2);
    // An inherited handler on another class is another route (class-level metadata may differ).
    expect(names.get(route(Dogs, Cats.prototype.list))).toBe(3);
    expect(seen).toEqual(['Cats.list', 'Cats.create', 'Dogs.list']);
  });

  it('keeps a falsy value too, without working it out again', () => {
    let calls = 0;
    const never = new PerRoute(() => (calls++, undefined));
    never.get(route(Cats, Cats.prototype.list));
    never.get(route(Cats, Cats.prototype.list));
    expect(calls).toBe(1);
  });
});
