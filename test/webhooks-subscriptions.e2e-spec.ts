import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebhookSubscription } from '../src/webhooks/webhook-subscription.entity.js';
import { expectError } from './support/expect-error.js';
import { fakeDns } from './support/fake-dns.js';
import { useTestApp } from './support/test-app.js';
import { databaseKinds } from './support/test-database.js';
import { webhooksClient } from './support/webhooks-client.js';

describe.each(databaseKinds())('webhook subscriptions on %s', (kind) => {
  // https only here: WEBHOOK_ALLOW_HTTP is off, and so is WEBHOOK_ALLOW_PRIVATE_TARGETS.
  const t = useTestApp(kind);
  beforeAll(() => {
    fakeDns(t.current, {
      'internal.example.com': ['10.1.2.3'],
      'mixed.example.com': ['93.184.215.14', '::ffff:0:7f00:1'],
      'public.example.com': ['93.184.215.14', '2606:4700:4700::1111'],
    });
  });

  it('creates (201, secret shown once), lists without secrets, and deletes', async () => {
    const { auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    const created = await hooks.subscribe('https://receiver.example.com/hooks?x=1', 'sync');
    expect(Object.keys(created).sort()).toEqual([
      'createdAt',
      'description',
      'id',
      'secret',
      'url',
    ]);
    expect(created.url).toBe('https://receiver.example.com/hooks?x=1');
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    const plain = await hooks.subscribe('https://other.example.com/');
    expect(plain).not.toHaveProperty('description');

    const list = await t.current.http().get('/webhooks').set('Authorization', auth);
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(2);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    expect(list.body.map((s: { id: string }) => s.id).sort()).toEqual(
      [created.id, plain.id].sort(),
    );

    const deleted = await t.current
      .http()
      .delete(`/webhooks/${created.id}`)
      .set('Authorization', auth);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const after = await t.current.http().get('/webhooks').set('Authorization', auth);
    expect(after.body.map((s: { id: string }) => s.id)).toEqual([plain.id]);
    expectError(
      await t.current.http().delete(`/webhooks/${created.id}`).set('Authorization', auth),
      404,
      /no webhook subscription with this id/,
    );
  });

  it('keeps owners apart: no listing, deleting or reading deliveries of another owner', async () => {
    const alice = await t.current.newCaller();
    const bob = await t.current.newCaller();
    const bobs = await webhooksClient(t.current, bob.auth).subscribe('https://bob.example.com/');
    const aliceList = await t.current.http().get('/webhooks').set('Authorization', alice.auth);
    expect(aliceList.body).toEqual([]);
    expectError(
      await t.current.http().delete(`/webhooks/${bobs.id}`).set('Authorization', alice.auth),
      404,
    );
    expectError(
      await t.current
        .http()
        .get(`/webhooks/${bobs.id}/deliveries`)
        .set('Authorization', alice.auth),
      404,
    );
    // Still there for bob.
    const bobList = await t.current.http().get('/webhooks').set('Authorization', bob.auth);
    expect(bobList.body.map((s: { id: string }) => s.id)).toEqual([bobs.id]);
  });

  it('allows 20 subscriptions per owner by default, the next a 409 naming the limit', async () => {
    const { auth } = await t.current.newCaller();
    const hooks = webhooksClient(t.current, auth);
    for (let i = 0; i < 20; i++) await hooks.subscribe(`https://r${i}.example.com/`);
    expectError(
      await t.current
        .http()
        .post('/webhooks')
        .set('Authorization', auth)
        .send({ url: 'https://r20.example.com/' }),
      409,
      /WEBHOOK_MAX_SUBSCRIPTIONS\) is 20/,
    );
  });

  it('answers 400 saying why a URL or body is refused', async () => {
    const { auth } = await t.current.newCaller();
    const post = (body: unknown) =>
      t.current
        .http()
        .post('/webhooks')
        .set('Authorization', auth)
        .send(body as object);
    expectError(
      await post({ url: 'http://receiver.example.com/' }),
      400,
      /^url must use https \(WEBHOOK_ALLOW_HTTP=true allows http\)$/,
    );
    expectError(await post({ url: 'ftp://receiver.example.com/' }), 400, /^url must use https$/);
    expectError(await post({ url: 'not a url' }), 400, /^url must be an absolute URL/);
    expectError(await post({ url: 'https://u:p@example.com/' }), 400, /user name or password/);
    expectError(await post({ url: 'https://example.com/#f' }), 400, /fragment/);
    expectError(await post({ url: 5 }), 400, /url must be a string/);
    expectError(await post({}), 400, /url/);
    expectError(
      await post({ url: `https://example.com/${'a'.repeat(2048)}` }),
      400,
      /at most 2048/,
    );
    expectError(
      await post({ url: 'https://example.com/', secret: 'x' }),
      400,
      /property secret should not exist/,
    );
    expectError(
      await post({ url: 'https://example.com/', description: 'd'.repeat(256) }),
      400,
      /description/,
    );
  });

  it('refuses at subscription time a target that can never be delivered, naming the setting', async () => {
    const { auth } = await t.current.newCaller();
    const post = (url: string) =>
      t.current.http().post('/webhooks').set('Authorization', auth).send({ url });
    for (const url of [
      'https://127.0.0.1/hooks',
      'https://[::1]/',
      'https://[::7f00:1]/',
      'https://[::a9fe:a9fe]/',
      'https://[::ffff:0:7f00:1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://[fec0::1]/',
      'https://[fd00::1]/',
      'https://10.1.2.3/',
      'https://169.254.169.254/latest/meta-data/',
      'https://localhost/',
      'https://api.localhost:8443/',
    ]) {
      expectError(await post(url), 400, /not a public .*WEBHOOK_ALLOW_PRIVATE_TARGETS=true/);
    }
    for (const url of ['https://internal.example.com/', 'https://MIXED.example.com/x']) {
      const refused = await post(url);
      expectError(refused, 400, /resolves to an address that is not public.*PRIVATE_TARGETS/);
      // Where an internal name points is not the caller's business.
      expect(refused.body.message).not.toMatch(/10\.1\.2\.3|7f00|127\.0\.0\.1/);
    }
    expect((await t.current.http().get('/webhooks').set('Authorization', auth)).body).toEqual([]);
    // A public address, the IPv6 form of a public IPv4 one, a public name, and a
    // name that does not resolve yet are accepted (the IPv6 form on another path:
    // on the same one it would be the same subscription).
    for (const url of [
      'https://93.184.215.14/',
      'https://[::ffff:93.184.215.14]/v6',
      'https://[2606:4700:4700::1111]/',
      'https://public.example.com/',
      'https://not-yet.example.com/',
    ]) {
      expect((await post(url)).status, url).toBe(201);
    }
  });

  it('answers 401 without a token, 404 for an unknown id, 400 for a bad limit', async () => {
    expectError(await t.current.http().get('/webhooks'), 401);
    expectError(await t.current.http().post('/webhooks').send({ url: 'https://a.example/' }), 401);
    const { auth } = await t.current.newCaller();
    // Ids are UUIDs the service made: anything else names no subscription, and
    // never reaches the database (PostgreSQL refuses a NUL in a text parameter).
    for (const id of ['nope', '%00', `${randomUUID()}%00`, 'x'.repeat(60)]) {
      expectError(
        await t.current.http().get(`/webhooks/${id}/deliveries`).set('Authorization', auth),
        404,
        /no webhook subscription with this id/,
      );
      expectError(
        await t.current.http().delete(`/webhooks/${id}`).set('Authorization', auth),
        404,
        /no webhook subscription with this id/,
      );
    }
    const { id } = await webhooksClient(t.current, auth).subscribe('https://a.example/');
    for (const limit of ['0', '1001', 'abc', '-1', '1.5', '']) {
      expectError(
        await t.current
          .http()
          .get(`/webhooks/${id}/deliveries?limit=${limit}`)
          .set('Authorization', auth),
        400,
        /^limit must be an integer from 1 to 1000$/,
      );
    }
    expectError(
      await t.current
        .http()
        .get(`/webhooks/${id}/deliveries?colour=red`)
        .set('Authorization', auth),
      400,
      /property colour should not exist/,
    );
  });
});

describe.each(databaseKinds())('webhook subscription bounds on %s', (kind) => {
  const t = useTestApp(kind, { WEBHOOK_MAX_SUBSCRIPTIONS: '5' });
  const post = (auth: string, url: string) =>
    t.current.http().post('/webhooks').set('Authorization', auth).send({ url });

  it('holds WEBHOOK_MAX_SUBSCRIPTIONS under concurrent creates, and names the limit', async () => {
    const { auth } = await t.current.newCaller();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => post(auth, `https://r${i}.example.com/hooks`)),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(5);
    for (const answer of answers.filter((a) => a.status !== 201)) {
      expectError(answer, 409, /already has 5 webhook subscriptions.*WEBHOOK_MAX_SUBSCRIPTIONS.*5/);
    }
    const list = await t.current.http().get('/webhooks').set('Authorization', auth);
    expect(list.body).toHaveLength(5);
    // Another owner has a bound of its own.
    const other = await t.current.newCaller();
    expect((await post(other.auth, 'https://r0.example.com/hooks')).status).toBe(201);
  });

  it('refuses the same normalised URL twice for one owner, naming the existing subscription', async () => {
    const alice = await t.current.newCaller();
    const first = await webhooksClient(t.current, alice.auth).subscribe(
      'https://Receiver.Example.com:443/a/../hooks',
    );
    expect(first.url).toBe('https://receiver.example.com/hooks');
    const answers = await Promise.all(
      ['https://receiver.example.com/hooks', 'HTTPS://RECEIVER.example.com/./hooks'].map((url) =>
        post(alice.auth, url),
      ),
    );
    for (const answer of answers) {
      expectError(answer, 409, new RegExp(`already exists: ${first.id}$`));
    }
    // A different URL is another subscription; another owner may use the same one.
    expect((await post(alice.auth, 'https://receiver.example.com/hooks?x')).status).toBe(201);
    const bob = await t.current.newCaller();
    expect((await post(bob.auth, 'https://receiver.example.com/hooks')).status).toBe(201);
  });

  it.each([
    [
      'an escaped unreserved character',
      'https://receiver.example.com/x',
      'https://receiver.example.com/%78',
    ],
    ['an empty query', 'https://receiver.example.com/x?', 'https://receiver.example.com/x'],
    [
      'an IPv4-mapped address',
      'https://[::ffff:93.184.215.14]/hooks',
      'https://93.184.215.14/hooks',
    ],
    [
      'the host in another case',
      'https://Receiver.EXAMPLE.com/a',
      'https://receiver.example.com/a',
    ],
    ['the default port', 'https://receiver.example.com/a', 'https://receiver.example.com:443/a'],
    [
      'the case of an escape',
      'https://receiver.example.com/a%2fb?q=%3d',
      'https://receiver.example.com/a%2Fb?q=%3D',
    ],
    ['dot segments', 'https://receiver.example.com/a/./b/../c', 'https://receiver.example.com/a/c'],
  ])('takes URLs that differ by %s as one subscription: a 409 naming it', async (_, one, other) => {
    const alice = await t.current.newCaller();
    const first = await post(alice.auth, one);
    expect(first.status).toBe(201);
    expectError(
      await post(alice.auth, other),
      409,
      new RegExp(`already exists: ${first.body.id}$`),
    );
  });

  it('keeps URLs apart that differ by a reserved character and its escape', async () => {
    const alice = await t.current.newCaller();
    expect((await post(alice.auth, 'https://receiver.example.com/a/b')).status).toBe(201);
    expect((await post(alice.auth, 'https://receiver.example.com/a%2Fb')).status).toBe(201);
  });

  it('keeps subscriptions that broke the bounds before they existed', async () => {
    const { owner, auth } = await t.current.newCaller();
    const manager = t.current.app.get(DataSource).manager;
    // Seven rows, two with the same URL: what an owner could have made before the bounds.
    const ids = Array.from({ length: 7 }, () => randomUUID());
    await manager.insert(
      WebhookSubscription,
      ids.map((id, i) => ({
        id,
        owner,
        url: `https://old${Math.min(i, 5)}.example.com/`,
        description: null,
        secret: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
        createdAt: Date.now() + i,
        disabledAt: null,
      })),
    );
    const list = await t.current.http().get('/webhooks').set('Authorization', auth);
    expect(list.body.map((s: { id: string }) => s.id)).toEqual(ids);
    expectError(await post(auth, 'https://new.example.com/'), 409, /already has 7/);
    expectError(await post(auth, 'https://old5.example.com/'), 409, new RegExp(ids[5]));
    // Deleting brings the owner back under the bound only once it is below it.
    for (const id of ids.slice(0, 3)) {
      await t.current.http().delete(`/webhooks/${id}`).set('Authorization', auth);
    }
    expect((await post(auth, 'https://new.example.com/')).status).toBe(201);
  });
});

describe.each(databaseKinds())('webhook targets with both opt-ins on %s', (kind) => {
  const t = useTestApp(kind, { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  beforeAll(() => {
    fakeDns(t.current, { 'internal.example.com': ['10.1.2.3'] });
  });

  it('accepts http, loopback, private literals, localhost and private names', async () => {
    const hooks = webhooksClient(t.current, (await t.current.newCaller()).auth);
    for (const url of [
      'http://127.0.0.1:8080/hooks',
      'https://[::1]/',
      'http://10.1.2.3/',
      'http://localhost:3000/',
      'https://internal.example.com/',
    ]) {
      expect((await hooks.subscribe(url)).url).toBe(new URL(url).href);
    }
  });
});
