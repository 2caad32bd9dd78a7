import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** A plant as the API returns it. */
interface ModelPlant {
  name: string;
  tag?: string;
}

/** The model: what each owner of one sequence should have, by id. */
export interface StoreModel {
  owners: Array<Map<bigint, ModelPlant>>;
}

/** The system under test: the running app, and one Authorization header per owner of the sequence. */
export interface StoreReal {
  inject(request: {
    method: 'GET' | 'POST' | 'DELETE';
    url: string;
    headers: Record<string, string>;
    payload?: string;
  }): Promise<LightMyRequestResponse>;
  auth: string[];
  steps: { count: number };
}

export const OWNERS_PER_SEQUENCE = 2;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const codePoints = (text: string) => [...text].length;

/**
 * Valid names and tags: any Unicode text the contract accepts (no NUL, no
 * unpaired surrogate, min..max code points), from every plane, with SQL and
 * JSON metacharacters, and sometimes at the maximum length.
 */
function storableText(min: number, max: number): fc.Arbitrary<string> {
  return fc
    .oneof(
      { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: min, maxLength: 30 }) },
      { weight: 3, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: 15 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: max - 5, maxLength: max }) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          "Robert'); DROP TABLE plants;--",
          '%_\\ "quoted" \t\n\r',
          '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}',
          'e\u0301 / \u00e9',
          '\uFEFF\u202E\uFFFF\u{10FFFF}',
          '__bigint__1',
          '🌵'.repeat(max),
        ),
      },
    )
    .map((text) => text.replaceAll('\u0000', '\u0001'))
    .filter((text) => codePoints(text) >= min && codePoints(text) <= max);
}

/** Ids over the whole int64 range, with a few that recur so that replays, conflicts and deletes hit. */
const id = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.constantFrom(INT64_MIN, -1n, 0n, 1n, 2n ** 53n, 2n ** 53n + 1n, INT64_MAX),
  },
  { weight: 1, arbitrary: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }) },
);
const owner = fc.nat({ max: OWNERS_PER_SEQUENCE - 1 });
const name = fc.oneof(fc.constantFrom('Fern', 'Ivy'), storableText(1, 255));
/** undefined: no tag property; null: "tag": null, which means no tag. */
const tag = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constantFrom('green', ''),
  storableText(0, 255),
);

const byId = (a: [bigint, ModelPlant], b: [bigint, ModelPlant]) => (a[0] < b[0] ? -1 : 1);

function expectErrorAnswer(response: LightMyRequestResponse, status: number): void {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(response.body)).toStrictEqual({ error: status, message: expect.any(String) });
}

/** After every step: each owner's full list equals the model's, in id order, byte for byte. */
async function expectStateEqual(model: StoreModel, real: StoreReal): Promise<void> {
  const responses = await Promise.all(
    real.auth.map((authorization) =>
      real.inject({ method: 'GET', url: '/plants', headers: { authorization } }),
    ),
  );
  for (const [slot, plants] of model.owners.entries()) {
    expect(responses[slot].statusCode).toBe(200);
    const expected = [...plants.entries()].sort(byId).map(([, plant]) => plant);
    expect(JSON.parse(responses[slot].body)).toStrictEqual(expected);
  }
}

class CreateCommand implements fc.AsyncCommand<StoreModel, StoreReal> {
  constructor(
    private readonly owner: number,
    private readonly id: bigint,
    private readonly name: string,
    private readonly tag: string | null | undefined,
  ) {}

  check = () => true;

  async run(model: StoreModel, real: StoreReal): Promise<void> {
    real.steps.count += 1;
    const tagJson = this.tag === undefined ? '' : `,"tag":${JSON.stringify(this.tag)}`;
    const response = await real.inject({
      method: 'POST',
      url: '/plants',
      headers: { authorization: real.auth[this.owner], 'content-type': 'application/json' },
      payload: `{"id":${this.id},"name":${JSON.stringify(this.name)}${tagJson}}`,
    });
    const plants = model.owners[this.owner];
    const wanted: ModelPlant =
      this.tag == null ? { name: this.name } : { name: this.name, tag: this.tag };
    const existing = plants.get(this.id);
    if (existing && (existing.name !== wanted.name || existing.tag !== wanted.tag)) {
      expectErrorAnswer(response, 409);
    } else {
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body)).toStrictEqual(wanted);
      plants.set(this.id, wanted);
    }
    await expectStateEqual(model, real);
  }

  toString = () =>
    `create(owner ${this.owner}, ${this.id}, ${JSON.stringify(this.name)}, ${JSON.stringify(this.tag)})`;
}

class ListCommand implements fc.AsyncCommand<StoreModel, StoreReal> {
  constructor(
    private readonly owner: number,
    private readonly limit: number | undefined,
  ) {}

  check = () => true;

  async run(model: StoreModel, real: StoreReal): Promise<void> {
    real.steps.count += 1;
    const response = await real.inject({
      method: 'GET',
      url: this.limit === undefined ? '/plants' : `/plants?limit=${this.limit}`,
      headers: { authorization: real.auth[this.owner] },
    });
    const all = [...model.owners[this.owner].entries()].sort(byId).map(([, plant]) => plant);
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toStrictEqual(all.slice(0, this.limit ?? all.length));
    await expectStateEqual(model, real);
  }

  toString = () => `list(owner ${this.owner}, limit ${this.limit})`;
}

class DeleteCommand implements fc.AsyncCommand<StoreModel, StoreReal> {
  constructor(
    private readonly owner: number,
    private readonly id: bigint,
  ) {}

  check = () => true;

  async run(model: StoreModel, real: StoreReal): Promise<void> {
    real.steps.count += 1;
    const response = await real.inject({
      method: 'DELETE',
      url: `/plants/${this.id}`,
      headers: { authorization: real.auth[this.owner] },
    });
    const plants = model.owners[this.owner];
    if (plants.has(this.id)) {
      expect(response.statusCode, response.body).toBe(204);
      expect(response.body).toBe('');
      plants.delete(this.id);
    } else {
      expectErrorAnswer(response, 404);
    }
    await expectStateEqual(model, real);
  }

  toString = () => `delete(owner ${this.owner}, ${this.id})`;
}

/** Short random sequences of create / list / delete by the owners of one sequence. */
export const storeCommands = fc.commands(
  [
    fc
      .tuple(owner, id, name, tag)
      .map(
        ([o, i, n, t]) => new CreateCommand(o, i, n, t) as fc.AsyncCommand<StoreModel, StoreReal>,
      ),
    fc
      .tuple(owner, fc.option(fc.nat({ max: 4 }), { nil: undefined }))
      .map(([o, limit]) => new ListCommand(o, limit) as fc.AsyncCommand<StoreModel, StoreReal>),
    fc
      .tuple(owner, id)
      .map(([o, i]) => new DeleteCommand(o, i) as fc.AsyncCommand<StoreModel, StoreReal>),
  ],
  { maxCommands: 8 },
);
