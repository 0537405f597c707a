import { startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
});
afterAll(() => t.close());

const put = (date: string, body: object, who: Caller = c) =>
  t.http().put(`/api/notes/${date}`).set('Authorization', who.auth).send(body);

describe('PUT /api/notes/:date', () => {
  it('creates a note at revision 1 with 201, then updates it with the current baseRevision', async () => {
    const created = await put('2030-01-01', {
      yesterday: 'wrote specs',
      today: 'code',
      impediments: ['CI is slow'],
      todayPriority: 'ship',
    }).expect(201);
    expect(created.body).toEqual({
      date: '2030-01-01',
      yesterday: 'wrote specs',
      today: 'code',
      impediments: ['CI is slow'],
      todayPriority: 'ship',
      revision: 1,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      deletedAt: null,
    });
    const updated = await put('2030-01-01', { today: 'review', baseRevision: 1 }).expect(200);
    expect(updated.body).toMatchObject({
      revision: 2,
      today: 'review',
      yesterday: '',
      impediments: [],
      todayPriority: '',
    });
    const row = await t.db
      .selectFrom('notes')
      .selectAll()
      .where('account_id', '=', c.accountId)
      .where('date', '=', '2030-01-01')
      .executeTakeFirstOrThrow();
    expect(row.revision).toBe(2);
  });

  it('answers a stale baseRevision with 409 revision_conflict carrying the current note', async () => {
    await put('2030-01-02', { today: 'a' }).expect(201);
    await put('2030-01-02', { today: 'b', baseRevision: 1 }).expect(200);
    const res = await put('2030-01-02', { today: 'c', baseRevision: 1 }).expect(409);
    expect(res.body.error.code).toBe('revision_conflict');
    expect(res.body.current).toMatchObject({ date: '2030-01-02', today: 'b', revision: 2 });
    expect(res.body.error.current).toEqual(res.body.current);
  });

  it('refuses to update an existing note without baseRevision (409 with current)', async () => {
    await put('2030-01-03', { today: 'a' }).expect(201);
    const res = await put('2030-01-03', { today: 'blind overwrite' }).expect(409);
    expect(res.body.error.code).toBe('revision_conflict');
    expect(res.body.current.today).toBe('a');
  });

  it('answers baseRevision for a date that never had a note with 409 and current null', async () => {
    const res = await put('2030-01-04', { today: 'x', baseRevision: 3 }).expect(409);
    expect(res.body).toMatchObject({ error: { code: 'revision_conflict' }, current: null });
  });

  it('rejects dates that are not real YYYY-MM-DD dates with 400', async () => {
    for (const date of ['2030-02-30', '2030-13-01', '20300101', 'today', '2029-02-29']) {
      const res = await put(date, { today: 'x' }).expect(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
    await put('2028-02-29', { today: 'leap day' }).expect(201);
  });

  it('rejects bad bodies with 400: unknown fields, wrong types, too long, NUL bytes, arrays', async () => {
    const bad = [
      { mood: 'great' },
      { today: 42 },
      { impediments: 'not an array' },
      { impediments: [1] },
      { yesterday: 'y'.repeat(50001) },
      { today: 'nul \u0000 byte' },
      { todayPriority: 'p'.repeat(501) },
      { baseRevision: 1e20 },
      { baseRevision: '1' },
    ];
    for (const body of bad) {
      const res = await put('2030-01-05', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
    const arr = await t.http().put('/api/notes/2030-01-05').set('Authorization', c.auth).send([1, 2]).expect(400);
    expect(arr.body.error.code).toBe('validation_failed');
  });

  it('accepts text fields of exactly 50,000 characters', async () => {
    const res = await put('2030-01-06', { yesterday: 'y'.repeat(50000), today: 't'.repeat(50000) }).expect(201);
    expect(res.body.yesterday).toHaveLength(50000);
  });

  it('needs meetings:write (403) and a key (401)', async () => {
    const reader = await t.caller(['meetings:read']);
    const res = await put('2030-01-07', { today: 'x' }, reader).expect(403);
    expect(res.body.error.code).toBe('insufficient_scope');
    await t.http().put('/api/notes/2030-01-07').send({ today: 'x' }).expect(401);
  });
});

describe('DELETE /api/notes/:date', () => {
  it('soft-deletes (204), hides the note from the list, and a second delete is 404', async () => {
    await put('2030-02-01', { today: 'x' }).expect(201);
    await t.http().delete('/api/notes/2030-02-01').set('Authorization', c.auth).expect(204);
    const row = await t.db
      .selectFrom('notes')
      .selectAll()
      .where('account_id', '=', c.accountId)
      .where('date', '=', '2030-02-01')
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).not.toBeNull();
    expect(row.revision).toBe(2);
    const list = await t.http().get('/api/notes').set('Authorization', c.auth).expect(200);
    expect(list.body.items.map((n: any) => n.date)).not.toContain('2030-02-01');
    await t.http().delete('/api/notes/2030-02-01').set('Authorization', c.auth).expect(404);
  });

  it('lets PUT recreate a deleted date without baseRevision, continuing its revision (201)', async () => {
    await put('2030-02-02', { today: 'x' }).expect(201);
    await t.http().delete('/api/notes/2030-02-02').set('Authorization', c.auth).expect(204);
    const res = await put('2030-02-02', { today: 'again' }).expect(201);
    expect(res.body).toMatchObject({ today: 'again', revision: 3, deletedAt: null });
  });

  it('answers a stale baseRevision against a deleted note with 409 and the tombstone', async () => {
    await put('2030-02-03', { today: 'x' }).expect(201);
    await t.http().delete('/api/notes/2030-02-03').set('Authorization', c.auth).expect(204);
    const res = await put('2030-02-03', { today: 'edit', baseRevision: 1 }).expect(409);
    expect(res.body.current).toMatchObject({ revision: 2, deletedAt: expect.any(String) });
  });

  it("is 404 for another account's note and 400 for a malformed date", async () => {
    await put('2030-02-04', { today: 'mine' }).expect(201);
    const other = await t.caller();
    await t.http().delete('/api/notes/2030-02-04').set('Authorization', other.auth).expect(404);
    await put('2030-02-04', { today: 'theirs' }, other).expect(201);
    const mine = await t.http().get('/api/notes').set('Authorization', c.auth).expect(200);
    expect(mine.body.items.find((n: any) => n.date === '2030-02-04').today).toBe('mine');
    await t.http().delete('/api/notes/not-a-date').set('Authorization', c.auth).expect(400);
  });
});

describe('GET /api/notes', () => {
  let reader: Caller;
  beforeAll(async () => {
    reader = await t.caller();
    for (let d = 1; d <= 7; d++) await put(`2031-03-0${d}`, { today: `day ${d}` }, reader).expect(201);
  });

  it('pages live notes newest date first with nextCursor', async () => {
    const first = await t.http().get('/api/notes?limit=3').set('Authorization', reader.auth).expect(200);
    expect(first.body.items.map((n: any) => n.date)).toEqual(['2031-03-07', '2031-03-06', '2031-03-05']);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await t
      .http()
      .get(`/api/notes?limit=3&cursor=${first.body.nextCursor}`)
      .set('Authorization', reader.auth)
      .expect(200);
    expect(second.body.items.map((n: any) => n.date)).toEqual(['2031-03-04', '2031-03-03', '2031-03-02']);
    const third = await t
      .http()
      .get(`/api/notes?limit=3&cursor=${second.body.nextCursor}`)
      .set('Authorization', reader.auth)
      .expect(200);
    expect(third.body).toEqual({ items: [expect.objectContaining({ date: '2031-03-01' })], nextCursor: null });
  });

  it('caps pages at 500 and rejects bad limits and cursors with 400', async () => {
    await t.http().get('/api/notes?limit=500').set('Authorization', reader.auth).expect(200);
    for (const q of ['limit=501', 'limit=0', 'limit=abc', 'cursor=%%%', 'cursor=bm9wZQ', 'changedSince=yesterday']) {
      const res = await t.http().get(`/api/notes?${q}`).set('Authorization', reader.auth);
      expect(res.status).toBe(400);
    }
  });

  it('ignores unknown query parameters', async () => {
    await t.http().get('/api/notes?unknown=1').set('Authorization', reader.auth).expect(200);
  });

  it('with changedSince lists changes oldest first, including deletions as tombstones', async () => {
    const since = (
      await t.db
        .selectFrom('notes')
        .select((eb) => eb.fn.max('updated_at').as('m'))
        .where('account_id', '=', reader.accountId)
        .executeTakeFirstOrThrow()
    ).m;
    await put('2031-03-02', { today: 'edited', baseRevision: 1 }, reader).expect(200);
    await t.http().delete('/api/notes/2031-03-03').set('Authorization', reader.auth).expect(204);
    const res = await t
      .http()
      .get(`/api/notes?changedSince=${encodeURIComponent(since)}`)
      .set('Authorization', reader.auth)
      .expect(200);
    expect(res.body.items.map((n: any) => [n.date, n.deletedAt === null])).toEqual([
      ['2031-03-02', true],
      ['2031-03-03', false],
    ]);
    const paged = await t
      .http()
      .get(`/api/notes?changedSince=${encodeURIComponent(since)}&limit=1`)
      .set('Authorization', reader.auth)
      .expect(200);
    expect(paged.body.items).toHaveLength(1);
    const rest = await t
      .http()
      .get(`/api/notes?changedSince=${encodeURIComponent(since)}&limit=1&cursor=${paged.body.nextCursor}`)
      .set('Authorization', reader.auth)
      .expect(200);
    expect(rest.body.items[0].date).toBe('2031-03-03');
    expect(rest.body.nextCursor).toBeNull();
  });

  it('needs meetings:read', async () => {
    const writer = await t.caller(['meetings:write']);
    await t.http().get('/api/notes').set('Authorization', writer.auth).expect(403);
  });
});
