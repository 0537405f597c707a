import { MISSING_ID, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
});
afterAll(() => t.close());

describe('GET /api/me', () => {
  it('returns the account behind the key with its scopes', async () => {
    const reader = await t.caller(['meetings:read']);
    const res = await t.http().get('/api/me').set('Authorization', reader.auth).expect(200);
    expect(res.body).toEqual({
      accountId: reader.accountId,
      email: expect.stringContaining('@example.test'),
      timezone: 'UTC',
      authenticatedBy: 'key',
      scopes: ['meetings:read'],
    });
  });

  it('says a browser session authenticated, with every scope', async () => {
    const { cookie } = await t.admin('create-session', '--account', c.accountId);
    const res = await t.http().get('/api/me').set('Cookie', cookie).expect(200);
    expect(res.body).toMatchObject({
      accountId: c.accountId,
      authenticatedBy: 'session',
      scopes: ['meetings:read', 'meetings:write', 'webhooks'],
    });
  });

  it('reports X-Timezone as the zone in effect, and refuses an unknown zone with 400', async () => {
    const res = await t.http().get('/api/me').set('Authorization', c.auth).set('X-Timezone', 'Asia/Tokyo').expect(200);
    expect(res.body.timezone).toBe('Asia/Tokyo');
    const bad = await t.http().get('/api/me').set('Authorization', c.auth).set('X-Timezone', 'Mars/Base').expect(400);
    expect(bad.body.error).toMatchObject({ code: 'validation_failed', details: [{ path: 'X-Timezone' }] });
  });

  it('needs meetings:read (403) and a valid key (401)', async () => {
    const writer = await t.caller(['meetings:write']);
    await t.http().get('/api/me').set('Authorization', writer.auth).expect(403);
    await t.http().get('/api/me').set('Authorization', 'Bearer meetings_nope').expect(401);
  });
});

describe('POST /api/people', () => {
  it('creates a person (201) and stores it for the account', async () => {
    const res = await t
      .http()
      .post('/api/people')
      .set('Authorization', c.auth)
      .send({ name: 'Grace Hopper', email: 'grace@example.test' })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Grace Hopper',
      email: 'grace@example.test',
      archived: false,
      archivedAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const row = await t.db.selectFrom('people').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.account_id).toBe(c.accountId);
  });

  it('rejects a missing or empty name, unknown fields, bad email and NUL bytes with 400', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: 'A', role: 'boss' },
      { name: 'A', email: 'nope' },
      { name: 'a\u0000b' },
      { name: 5 },
    ]) {
      const res = await t.http().post('/api/people').set('Authorization', c.auth).send(body).expect(400);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', details: expect.any(Array) });
    }
  });

  it('rejects a body without JSON content type as missing fields (400)', async () => {
    await t
      .http()
      .post('/api/people')
      .set('Authorization', c.auth)
      .set('Content-Type', 'text/plain')
      .send('name=x')
      .expect(400);
  });

  it('needs meetings:write', async () => {
    const reader = await t.caller(['meetings:read']);
    await t.http().post('/api/people').set('Authorization', reader.auth).send({ name: 'x' }).expect(403);
  });
});

describe('PATCH /api/people/:id and DELETE /api/people/:id', () => {
  it('renames, archives with DELETE (200, idempotent) and restores with PATCH archived:false', async () => {
    const { body: p } = await t
      .http()
      .post('/api/people')
      .set('Authorization', c.auth)
      .send({ name: 'Linus' })
      .expect(201);
    const renamed = await t
      .http()
      .patch(`/api/people/${p.id}`)
      .set('Authorization', c.auth)
      .send({ name: 'Linus T.', email: null })
      .expect(200);
    expect(renamed.body).toMatchObject({ name: 'Linus T.', email: null, archived: false });
    const archived = await t.http().delete(`/api/people/${p.id}`).set('Authorization', c.auth).expect(200);
    expect(archived.body).toMatchObject({ archived: true, archivedAt: expect.any(String) });
    const again = await t.http().delete(`/api/people/${p.id}`).set('Authorization', c.auth).expect(200);
    expect(again.body.archivedAt).toBe(archived.body.archivedAt);
    const list = await t.http().get('/api/people').set('Authorization', c.auth).expect(200);
    expect(list.body.items.map((x: any) => x.id)).not.toContain(p.id);
    const withArchived = await t.http().get('/api/people?includeArchived=1').set('Authorization', c.auth).expect(200);
    expect(withArchived.body.items.map((x: any) => x.id)).toContain(p.id);
    const restored = await t
      .http()
      .patch(`/api/people/${p.id}`)
      .set('Authorization', c.auth)
      .send({ archived: false })
      .expect(200);
    expect(restored.body).toMatchObject({ archived: false, archivedAt: null });
  });

  it("is 404 for another account's person, an unknown id and a malformed id", async () => {
    const { body: p } = await t
      .http()
      .post('/api/people')
      .set('Authorization', c.auth)
      .send({ name: 'Mine' })
      .expect(201);
    const other = await t.caller();
    await t.http().patch(`/api/people/${p.id}`).set('Authorization', other.auth).send({ name: 'stolen' }).expect(404);
    await t.http().delete(`/api/people/${p.id}`).set('Authorization', other.auth).expect(404);
    await t.http().patch(`/api/people/${MISSING_ID}`).set('Authorization', c.auth).send({ name: 'x' }).expect(404);
    await t.http().delete('/api/people/not-a-uuid').set('Authorization', c.auth).expect(404);
    const row = await t.db.selectFrom('people').select('name').where('id', '=', p.id).executeTakeFirstOrThrow();
    expect(row.name).toBe('Mine');
  });

  it('rejects an empty PATCH body with 400', async () => {
    const { body: p } = await t.http().post('/api/people').set('Authorization', c.auth).send({ name: 'X' }).expect(201);
    await t.http().patch(`/api/people/${p.id}`).set('Authorization', c.auth).send({}).expect(400);
  });
});

describe('GET /api/people', () => {
  it('pages people oldest first with a cursor', async () => {
    const owner = await t.caller();
    for (const name of ['A', 'B', 'C'])
      await t.http().post('/api/people').set('Authorization', owner.auth).send({ name }).expect(201);
    const first = await t.http().get('/api/people?limit=2').set('Authorization', owner.auth).expect(200);
    expect(first.body.items.map((p: any) => p.name)).toEqual(['A', 'B']);
    const second = await t
      .http()
      .get(`/api/people?limit=2&cursor=${first.body.nextCursor}`)
      .set('Authorization', owner.auth)
      .expect(200);
    expect(second.body).toEqual({ items: [expect.objectContaining({ name: 'C' })], nextCursor: null });
  });

  it('refuses a cursor re-encoded with another position, or with a byte flipped (400 invalid_cursor): cursors are signed', async () => {
    const owner = await t.caller();
    for (const name of ['A', 'B', 'C'])
      await t.http().post('/api/people').set('Authorization', owner.auth).send({ name }).expect(201);
    const cursor: string = (await t.http().get('/api/people?limit=1').set('Authorization', owner.auth).expect(200)).body
      .nextCursor;
    const [createdAt, id] = JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()) as [string, string];
    const earlier = Buffer.from(JSON.stringify(['2000-01-01T00:00:00.000000Z', id])).toString('base64url');
    const flipped = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
    expect(createdAt).toMatch(/^\d{4}-/);
    for (const bad of [earlier, flipped]) {
      const res = await t
        .http()
        .get('/api/people')
        .query({ limit: 1, cursor: bad })
        .set('Authorization', owner.auth)
        .expect(400);
      expect(res.body.error.code).toBe('invalid_cursor');
    }
  });
});
