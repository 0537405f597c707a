import { randomUUID } from 'node:crypto';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { HIGH_LIMITS, countRows } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp(HIGH_LIMITS);
});
afterAll(() => t.close());

const snippet = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  content: `content of ${name}`,
  ...extra,
});

async function create(c: Caller, body: object, status = 201) {
  return t.http().post('/api/snippets').set('Authorization', c.auth).send(body).expect(status);
}

/** Fills an account with `n` snippets straight in the database. */
async function fill(accountId: string, n: number): Promise<void> {
  await t.db
    .insertInto('snippets')
    .values(
      Array.from({ length: n }, (_, i) => ({
        id: randomUUID(),
        account_id: accountId,
        name: `s${i}`,
        content: 'x',
        keyword: null,
      })),
    )
    .execute();
}

describe('POST /api/snippets', () => {
  it('creates a snippet and answers 201 with it', async () => {
    const c = await t.caller();
    const res = await create(c, snippet('Greeting', { keyword: 'Hi' }));
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Greeting',
      content: 'content of Greeting',
      keyword: 'Hi',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const plain = await create(c, snippet('No keyword'));
    expect(plain.body.keyword).toBeNull();
    await create(c, snippet('Null keyword', { keyword: null }));
  });

  it('refuses a keyword another snippet has, ignoring case, with 409', async () => {
    const c = await t.caller();
    await create(c, snippet('a', { keyword: 'sig' }));
    const res = await create(c, snippet('b', { keyword: 'SIG' }), 409);
    expect(res.body).toEqual({
      error: 'A snippet with the keyword "SIG" already exists (keywords are unique ignoring case)',
    });
    const other = await t.caller();
    await create(other, snippet('b', { keyword: 'sig' }));
  });

  it('refuses the 201st snippet with 409', async () => {
    const c = await t.caller();
    await fill(c.accountId, 200);
    const res = await create(c, snippet('one too many'), 409);
    expect(res.body).toEqual({
      error: 'Snippet limit reached: an account can have at most 200 snippets; delete one first',
    });
    expect(await countRows(t, 'snippets', c.accountId)).toBe(200);
  });

  it('lets exactly one of concurrent creates at 199 snippets through', async () => {
    const c = await t.caller();
    await fill(c.accountId, 199);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        t
          .http()
          .post('/api/snippets')
          .set('Authorization', c.auth)
          .send(snippet(`race ${i}`)),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    expect(await countRows(t, 'snippets', c.accountId)).toBe(200);
  });

  it('lets exactly one of concurrent creates with the same keyword through', async () => {
    const c = await t.caller();
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        t
          .http()
          .post('/api/snippets')
          .set('Authorization', c.auth)
          .send(snippet(`k${i}`, { keyword: 'same' })),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
  });

  it.each([
    ['no body', undefined, /name is required; content is required/],
    ['an empty name', snippet(''), /name must NOT have fewer than 1 characters/],
    ['a blank name', { name: '   ', content: 'x' }, /name must match pattern/],
    ['a name over 100 characters', snippet('n'.repeat(101)), /name must NOT have more than 100 characters/],
    ['empty content', { name: 'x', content: '' }, /content must NOT have fewer than 1 characters/],
    [
      'content over 20000 characters',
      { name: 'x', content: 'c'.repeat(20_001) },
      /content must NOT have more than 20000 characters/,
    ],
    ['a keyword with spaces', snippet('x', { keyword: 'two words' }), /keyword must match pattern/],
    ['a keyword over 32 characters', snippet('x', { keyword: 'k'.repeat(33) }), /keyword must match pattern/],
    ['a NUL byte', { name: 'x', content: 'a\u0000' }, /content must not contain NUL/],
    ['an unknown field', snippet('x', { tags: [] }), /tags is not an allowed property/],
    ['a client id', snippet('x', { id: randomUUID() }), /id is not an allowed property/],
  ])('refuses %s with 400', async (_name, body, message) => {
    const c = await t.caller();
    const req = t.http().post('/api/snippets').set('Authorization', c.auth);
    const res = await (body === undefined ? req : req.send(body)).expect(400);
    expect(res.body.error).toMatch(message);
  });
});

describe('GET /api/snippets', () => {
  it('lists every snippet by name ignoring case, unpaginated', async () => {
    const c = await t.caller();
    for (const name of ['beta', 'Alpha', 'gamma']) await create(c, snippet(name));
    const res = await t.http().get('/api/snippets').set('Authorization', c.auth).expect(200);
    expect(res.body.items.map((s: any) => s.name)).toEqual(['Alpha', 'beta', 'gamma']);
    const other = await t.caller();
    await t.http().get('/api/snippets').set('Authorization', other.auth).expect(200, { items: [] });
  });

  it('returns all 200 at once', async () => {
    const c = await t.caller();
    await fill(c.accountId, 200);
    const res = await t.http().get('/api/snippets').set('Authorization', c.auth).expect(200);
    expect(res.body.items).toHaveLength(200);
  });
});

describe('PUT /api/snippets', () => {
  it('replaces the whole set: named ids are kept, others are new, the rest are deleted', async () => {
    const c = await t.caller();
    const kept = (await create(c, snippet('kept', { keyword: 'k' }))).body;
    const edited = (await create(c, snippet('edited'))).body;
    const dropped = (await create(c, snippet('dropped'))).body;
    const strangerId = randomUUID();
    const res = await t
      .http()
      .put('/api/snippets')
      .set('Authorization', c.auth)
      .send({
        items: [
          { id: kept.id, name: 'kept', content: kept.content, keyword: 'k' },
          { id: edited.id, name: 'edited', content: 'new content' },
          { id: strangerId, name: 'fresh', content: 'f' },
          { name: 'also fresh', content: 'g', keyword: 'g' },
        ],
      })
      .expect(200);
    const byName = Object.fromEntries(res.body.items.map((s: any) => [s.name, s]));
    expect(res.body.items.map((s: any) => s.name)).toEqual(['also fresh', 'edited', 'fresh', 'kept']);
    expect(byName.kept).toEqual(kept);
    expect(byName.edited).toMatchObject({ id: edited.id, content: 'new content', createdAt: edited.createdAt });
    expect(byName.edited.updatedAt > edited.updatedAt).toBe(true);
    expect(byName.fresh.id).not.toBe(strangerId);
    expect(res.body.items.map((s: any) => s.id)).not.toContain(dropped.id);
    const list = await t.http().get('/api/snippets').set('Authorization', c.auth).expect(200);
    expect(list.body).toEqual(res.body);
  });

  it('lets kept snippets swap keywords', async () => {
    const c = await t.caller();
    const a = (await create(c, snippet('a', { keyword: 'one' }))).body;
    const b = (await create(c, snippet('b', { keyword: 'two' }))).body;
    const res = await t
      .http()
      .put('/api/snippets')
      .set('Authorization', c.auth)
      .send({
        items: [
          { id: a.id, name: 'a', content: a.content, keyword: 'two' },
          { id: b.id, name: 'b', content: b.content, keyword: 'one' },
        ],
      })
      .expect(200);
    expect(res.body.items.map((s: any) => [s.id, s.keyword])).toEqual([
      [a.id, 'two'],
      [b.id, 'one'],
    ]);
  });

  it('empties the set with an empty list', async () => {
    const c = await t.caller();
    await create(c, snippet('x'));
    await t.http().put('/api/snippets').set('Authorization', c.auth).send({ items: [] }).expect(200, { items: [] });
    expect(await countRows(t, 'snippets', c.accountId)).toBe(0);
  });

  it('stores 200 snippets and refuses 201 with 400, changing nothing', async () => {
    const c = await t.caller();
    const before = (await create(c, snippet('before'))).body;
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `n${i}`, content: 'x' }));
    const res = await t
      .http()
      .put('/api/snippets')
      .set('Authorization', c.auth)
      .send({ items: items(201) })
      .expect(400);
    expect(res.body.error).toMatch(/items must NOT have more than 200 items/);
    await t
      .http()
      .get('/api/snippets')
      .set('Authorization', c.auth)
      .expect(200, { items: [before] });
    const ok = await t
      .http()
      .put('/api/snippets')
      .set('Authorization', c.auth)
      .send({ items: items(200) })
      .expect(200);
    expect(ok.body.items).toHaveLength(200);
  });

  it('refuses repeated keywords or ids in the set with 400, changing nothing', async () => {
    const c = await t.caller();
    const before = (await create(c, snippet('before'))).body;
    const dupKeyword = await t
      .http()
      .put('/api/snippets')
      .set('Authorization', c.auth)
      .send({ items: [snippet('a', { keyword: 'X' }), snippet('b', { keyword: 'x' })] })
      .expect(400);
    expect(dupKeyword.body.error).toBe(
      'Invalid request body: items/1/keyword repeats the keyword "x" (keywords are unique ignoring case)',
    );
    const dupId = await t
      .http()
      .put('/api/snippets')
      .set('Authorization', c.auth)
      .send({ items: [snippet('a', { id: before.id }), snippet('b', { id: before.id })] })
      .expect(400);
    expect(dupId.body.error).toMatch(/items\/1\/id repeats the id/);
    await t
      .http()
      .get('/api/snippets')
      .set('Authorization', c.auth)
      .expect(200, { items: [before] });
  });

  it("never touches another account's snippet named by id", async () => {
    const c = await t.caller();
    const other = await t.caller();
    const theirs = (await create(other, snippet('theirs'))).body;
    const res = await t
      .http()
      .put('/api/snippets')
      .set('Authorization', c.auth)
      .send({ items: [{ id: theirs.id, name: 'mine', content: 'x' }] })
      .expect(200);
    expect(res.body.items[0].id).not.toBe(theirs.id);
    await t
      .http()
      .get('/api/snippets')
      .set('Authorization', other.auth)
      .expect(200, { items: [theirs] });
  });

  it.each([
    ['a bare array', [snippet('a')], /body must be object/],
    ['no items', {}, /items is required/],
    ['an invalid snippet', { items: [{ name: 'a' }] }, /items\/0\/content is required/],
    ['a non-UUID id', { items: [snippet('a', { id: 'x' })] }, /items\/0\/id must match pattern/],
  ])('refuses %s with 400', async (_name, body, message) => {
    const c = await t.caller();
    const res = await t.http().put('/api/snippets').set('Authorization', c.auth).send(body).expect(400);
    expect(res.body.error).toMatch(message);
  });
});

describe('DELETE /api/snippets/:id', () => {
  it('deletes one snippet with {deleted: 1}; unknown, non-UUID and foreign ids are 404', async () => {
    const c = await t.caller();
    const other = await t.caller();
    const s = (await create(c, snippet('x'))).body;
    await t
      .http()
      .delete(`/api/snippets/${s.id}`)
      .set('Authorization', other.auth)
      .expect(404, { error: 'Snippet not found' });
    await t.http().delete('/api/snippets/nope').set('Authorization', c.auth).expect(404);
    await t.http().delete(`/api/snippets/${s.id}`).set('Authorization', c.auth).expect(200, { deleted: 1 });
    await t.http().delete(`/api/snippets/${s.id}`).set('Authorization', c.auth).expect(404);
  });

  it('frees a place below the limit', async () => {
    const c = await t.caller();
    await fill(c.accountId, 199);
    const s = (await create(c, snippet('200th'))).body;
    await create(c, snippet('201st'), 409);
    await t.http().delete(`/api/snippets/${s.id}`).set('Authorization', c.auth).expect(200);
    await create(c, snippet('200th again'));
  });
});
