import { describe, expect, it } from 'vitest';
import { expectError } from './support/expect-error.js';
import { plantsClient } from './support/plants-client.js';
import { databaseKinds } from './support/test-database.js';
import { useTestApp } from './support/test-app.js';

describe.each(databaseKinds())('POST /plants on %s', (kind) => {
  const t = useTestApp(kind, { BODY_LIMIT_BYTES: '4096' });

  const caller = async () => {
    const { owner, auth } = await t.current.newCaller();
    return { owner, auth, plants: plantsClient(t.current, auth) };
  };

  it('answers 200 with the Plant: name and tag, no id', async () => {
    const { plants } = await caller();
    const response = await plants.create({ id: 1, name: 'Fern', tag: 'green' });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({ name: 'Fern', tag: 'green' });
  });

  it('leaves tag out when the plant has none (never null), also for tag: null', async () => {
    const { plants } = await caller();
    const created = await plants.create({ id: 1, name: 'Cactus' });
    expect(created.status).toBe(200);
    expect(created.text).toBe('{"name":"Cactus"}');
    const withNull = await plants.create('{"id": 2, "name": "Aloe", "tag": null}');
    expect(withNull.status).toBe(200);
    expect(withNull.text).toBe('{"name":"Aloe"}');
    const listed = await plants.list();
    expect(listed.text).toBe('[{"name":"Cactus"},{"name":"Aloe"}]');
  });

  it('answers an exact replay with 200 and changes nothing', async () => {
    const { plants } = await caller();
    expect((await plants.create({ id: 7, name: 'Ivy', tag: 'vine' })).status).toBe(200);
    const replay = await plants.create({ id: 7, name: 'Ivy', tag: 'vine' });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ name: 'Ivy', tag: 'vine' });
    expect((await plants.list()).body).toEqual([{ name: 'Ivy', tag: 'vine' }]);
  });

  it('answers 409 for the same id with another name or tag, and keeps the first plant', async () => {
    const { plants } = await caller();
    await plants.create({ id: 7, name: 'Ivy', tag: 'vine' });
    expectError(await plants.create({ id: 7, name: 'Other', tag: 'vine' }), 409, /id 7/);
    expectError(await plants.create({ id: 7, name: 'Ivy', tag: 'other' }), 409);
    expectError(await plants.create({ id: 7, name: 'Ivy' }), 409);
    expect((await plants.list()).body).toEqual([{ name: 'Ivy', tag: 'vine' }]);
  });

  it('lets exactly one of 20 concurrent creates of one id win', async () => {
    const { plants } = await caller();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => plants.create({ id: 42n, name: `racer ${i}` })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const winner = responses.find((r) => r.status === 200)!.body;
    expect((await plants.list()).body).toEqual([winner]);
  });

  it.each([
    ['a string id', '{"id": "5", "name": "x"}', /^id must be an integer/],
    ['a fractional id', '{"id": 1.5, "name": "x"}', /^id must be an integer/],
    ['an id above int64', '{"id": 9223372036854775808, "name": "x"}', /^id must be an integer/],
    ['an id below int64', '{"id": -9223372036854775809, "name": "x"}', /^id must be an integer/],
    ['a huge exponent id', '{"id": 1e400, "name": "x"}', /^id must be an integer/],
    ['a null id', '{"id": null, "name": "x"}', /^id must be an integer/],
    ['no id', '{"name": "x"}', /^id must be an integer/],
    ['a boolean id', '{"id": true, "name": "x"}', /^id must be an integer/],
    ['no name', '{"id": 1}', /^name must be a string/],
    ['an empty name', '{"id": 1, "name": ""}', /^name must not be empty/],
    ['a numeric name', '{"id": 1, "name": 5}', /^name must be a string/],
    [
      'a name of 256 characters',
      `{"id": 1, "name": "${'a'.repeat(256)}"}`,
      /^name must be at most 255/,
    ],
    [
      'a tag of 256 characters',
      `{"id": 1, "name": "x", "tag": "${'é'.repeat(256)}"}`,
      /^tag must be at most 255/,
    ],
    ['a NUL in the name', '{"id": 1, "name": "a\\u0000b"}', /^name must not contain the NUL/],
    [
      'an unpaired surrogate in the tag',
      '{"id": 1, "name": "x", "tag": "\\ud800"}',
      /^tag must not contain an unpaired surrogate/,
    ],
    [
      'an unknown property',
      '{"id": 1, "name": "x", "colour": "green"}',
      /property colour should not exist/,
    ],
    // Used to be dropped silently (200): class-transformer skips inherited member names.
    [
      'a property named like an Object.prototype member',
      '{"id": 1, "name": "x", "toString": "y", "__defineGetter__": 0}',
      /property toString should not exist; property __defineGetter__ should not exist/,
    ],
    ['a __proto__ property', '{"id": 1, "name": "x", "__proto__": {"admin": true}}', /__proto__/],
    ['malformed JSON', '{"id": 1, "name": ', /not valid JSON/],
    // Used to be a 500: the nested value overflowed the stack after parsing.
    [
      'a deeply nested tag',
      `{"id": 1, "name": "x", "tag": ${'['.repeat(1500)}1${']'.repeat(1500)}}`,
      /nested too deeply/,
    ],
    ['duplicate keys', '{"id": 1, "id": 2, "name": "x"}', /not valid JSON.*Duplicate key/],
    ['a JSON array', '[{"id": 1, "name": "x"}]', /must be a JSON object/],
    ['JSON null', 'null', /must be a JSON object/],
    ['an empty body', '', /empty/],
  ])('answers 400 for %s, naming the problem, and stores nothing', async (_, body, message) => {
    const { plants } = await caller();
    expectError(await plants.create(body), 400, message);
    expect((await plants.list()).body).toEqual([]);
  });

  it('accepts integral JSON numbers written as 5.0 or 1e3 as ids', async () => {
    const { plants } = await caller();
    expect((await plants.create('{"id": 5.0, "name": "five"}')).status).toBe(200);
    expect((await plants.create('{"id": 1e3, "name": "thousand"}')).status).toBe(200);
    expect((await plants.remove(1000)).status).toBe(204);
    expect((await plants.remove(5)).status).toBe(204);
  });

  it('answers 413 for a body over the limit, and 415 for a body that is not JSON', async () => {
    const { plants, auth } = await caller();
    expectError(await plants.create(`{"id": 1, "name": "${'x'.repeat(5000)}"}`), 413);
    const text = await t.current
      .http()
      .post('/plants')
      .set('Authorization', auth)
      .set('Content-Type', 'text/plain')
      .send('{"id": 1, "name": "x"}');
    expectError(text, 415, /application\/json/);
    const form = await t.current
      .http()
      .post('/plants')
      .set('Authorization', auth)
      .type('form')
      .send({ id: '1', name: 'x' });
    expectError(form, 415);
    expect((await plants.list()).body).toEqual([]);
  });

  it('stores any Unicode text and SQL metacharacters byte for byte', async () => {
    const { plants } = await caller();
    const names = [
      'Ficus 🌿 lyrata',
      '薔薇',
      'e\u0301 (combining) and \u00e9 (precomposed)',
      "Robert'); DROP TABLE plants;--",
      '%_\\ "quoted" \t tab \n newline',
      '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}',
      '\uFEFFbom and \u202Ertl',
      '🌵'.repeat(255),
    ];
    const tagOf = (name: string) => [...name].slice(0, 20).join('');
    for (const [i, name] of names.entries()) {
      const response = await plants.create({ id: i, name, tag: tagOf(name) });
      expect(response.status, name).toBe(200);
      expect(response.body).toEqual({ name, tag: tagOf(name) });
    }
    const listed = await plants.list();
    expect(listed.body.map((p: { name: string }) => p.name)).toEqual(names);
    expect(Buffer.from(listed.text, 'utf8').includes(Buffer.from('🌵'.repeat(255), 'utf8'))).toBe(
      true,
    );
  });
});
