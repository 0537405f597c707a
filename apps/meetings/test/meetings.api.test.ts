import pg from 'pg';
import { addItem, createSeries, MISSING_ID, sessionOf, setStatus, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
});
afterAll(() => t.close());

describe('POST /api/meetings', () => {
  it('creates a SCHEDULED meeting (201) on any date, at the series start time unless given', async () => {
    const { series } = await createSeries(t, c);
    const res = await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: series.id, date: '2030-01-09', sharedNotes: 'agenda' })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      seriesId: series.id,
      date: '2030-01-09',
      startsAt: '2030-01-09T08:00:00Z',
      status: 'SCHEDULED',
      sharedNotes: 'agenda',
      revision: 1,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const at = await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: series.id, date: '2030-07-10', startTime: '14:15' })
      .expect(201);
    expect(at.body.startsAt).toBe('2030-07-10T12:15:00Z');
  });

  it('is 409 meeting_exists for a date the series already has', async () => {
    const { series } = await createSeries(t, c);
    const res = await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: series.id, date: '2030-01-07' })
      .expect(409);
    expect(res.body.error.code).toBe('meeting_exists');
  });

  it('is 404 for an unknown or foreign series, 409 for an archived one, 400 for bad input', async () => {
    const other = await t.caller();
    const { series } = await createSeries(t, other);
    const foreign = await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: series.id, date: '2030-01-09' })
      .expect(404);
    expect(foreign.body.error.code).toBe('series_not_found');
    await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: MISSING_ID, date: '2030-01-09' })
      .expect(404);
    const mine = await createSeries(t, c);
    await t.http().delete(`/api/series/${mine.series.id}`).set('Authorization', c.auth).expect(200);
    const archived = await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: mine.series.id, date: '2030-01-09' })
      .expect(409);
    expect(archived.body.error.code).toBe('series_archived');
    for (const body of [
      {},
      { seriesId: 'x', date: '2030-01-09' },
      { seriesId: MISSING_ID, date: '2030-02-30' },
      { seriesId: MISSING_ID, date: '2030-01-09', status: 'DRAFT' },
    ]) {
      await t.http().post('/api/meetings').set('Authorization', c.auth).send(body).expect(400);
    }
  });
});

describe('GET /api/meetings', () => {
  let owner: Caller;
  let seriesA: any;
  let seriesB: any;
  beforeAll(async () => {
    owner = await t.caller();
    seriesA = await createSeries(t, owner);
    seriesB = await createSeries(t, owner, { weekday: 2 });
  });

  it('lists meetings by date, then id, with keyset pages', async () => {
    const all = await t.http().get('/api/meetings').set('Authorization', owner.auth).expect(200);
    expect(all.body.items.map((m: any) => m.date)).toEqual(['2030-01-07', '2030-01-08', '2030-01-14', '2030-01-15']);
    expect(all.body.nextCursor).toBeNull();
    const page1 = await t.http().get('/api/meetings?limit=3').set('Authorization', owner.auth).expect(200);
    const page2 = await t
      .http()
      .get(`/api/meetings?limit=3&cursor=${page1.body.nextCursor}`)
      .set('Authorization', owner.auth)
      .expect(200);
    expect([...page1.body.items, ...page2.body.items].map((m: any) => m.id)).toEqual(
      all.body.items.map((m: any) => m.id),
    );
  });

  it('filters by seriesId, status and from/to dates', async () => {
    const bySeries = await t
      .http()
      .get(`/api/meetings?seriesId=${seriesB.series.id}`)
      .set('Authorization', owner.auth)
      .expect(200);
    expect(bySeries.body.items.map((m: any) => m.date)).toEqual(['2030-01-08', '2030-01-15']);
    await setStatus(t, owner, seriesA.meetings[0].id, 'COMPLETED');
    const done = await t.http().get('/api/meetings?status=COMPLETED').set('Authorization', owner.auth).expect(200);
    expect(done.body.items.map((m: any) => m.id)).toEqual([seriesA.meetings[0].id]);
    const range = await t
      .http()
      .get('/api/meetings?from=2030-01-08&to=2030-01-14')
      .set('Authorization', owner.auth)
      .expect(200);
    expect(range.body.items.map((m: any) => m.date)).toEqual(['2030-01-08', '2030-01-14']);
  });

  it('lists the parking lot after dated meetings, and leaves it out of date ranges', async () => {
    const first = await addItem(t, owner, seriesA.meetings[0].id);
    await t
      .http()
      .post(`/api/items/${first.id}/carry`)
      .set('Authorization', owner.auth)
      .send({ parkingLot: true })
      .expect(200);
    const all = await t
      .http()
      .get(`/api/meetings?seriesId=${seriesA.series.id}`)
      .set('Authorization', owner.auth)
      .expect(200);
    expect(all.body.items.map((m: any) => [m.date, m.status])).toEqual([
      ['2030-01-07', 'COMPLETED'],
      ['2030-01-14', 'SCHEDULED'],
      [null, 'DRAFT'],
    ]);
    const paged = await t
      .http()
      .get(`/api/meetings?seriesId=${seriesA.series.id}&limit=2`)
      .set('Authorization', owner.auth)
      .expect(200);
    const rest = await t
      .http()
      .get(`/api/meetings?seriesId=${seriesA.series.id}&limit=2&cursor=${paged.body.nextCursor}`)
      .set('Authorization', owner.auth)
      .expect(200);
    expect(rest.body.items.map((m: any) => m.status)).toEqual(['DRAFT']);
    const ranged = await t
      .http()
      .get(`/api/meetings?seriesId=${seriesA.series.id}&from=2030-01-01`)
      .set('Authorization', owner.auth)
      .expect(200);
    expect(ranged.body.items.every((m: any) => m.date !== null)).toBe(true);
  });

  it('rejects bad filters with 400, caps pages at 500, shows nothing of other accounts', async () => {
    for (const q of ['status=DONE', 'seriesId=abc', 'from=2030-13-01', 'limit=501', 'cursor=abc']) {
      await t.http().get(`/api/meetings?${q}`).set('Authorization', owner.auth).expect(400);
    }
    await t.http().get('/api/meetings?limit=500').set('Authorization', owner.auth).expect(200);
    const stranger = await t.caller();
    const res = await t
      .http()
      .get(`/api/meetings?seriesId=${seriesA.series.id}`)
      .set('Authorization', stranger.auth)
      .expect(200);
    expect(res.body.items).toEqual([]);
  });
});

describe('GET /api/meetings/:id', () => {
  it('returns the meeting with its items in order and previous null when nothing was completed before', async () => {
    const { meetings } = await createSeries(t, c);
    const a = await addItem(t, c, meetings[0].id, { text: 'first' });
    const b = await addItem(t, c, meetings[0].id, { text: 'second', kind: 'ACTION' });
    const child = await addItem(t, c, meetings[0].id, { text: 'child of first', parentId: a.id });
    const res = await t.http().get(`/api/meetings/${meetings[0].id}`).set('Authorization', c.auth).expect(200);
    expect(res.body.items.map((i: any) => i.id)).toEqual([a.id, child.id, b.id]);
    expect(res.body.previous).toBeNull();
  });

  it('gives previous: the latest COMPLETED meeting before it, with shared notes, discussed points, decisions and open actions', async () => {
    const { series, meetings } = await createSeries(t, c);
    const [m1, m2] = meetings;
    const extra = await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: series.id, date: '2030-01-01' })
      .expect(201);
    await setStatus(t, c, extra.body.id, 'COMPLETED');
    const discussed = await addItem(t, c, m1.id, { text: 'discussed' });
    const carried = await addItem(t, c, m1.id, { text: 'carried away' });
    const decision = await addItem(t, c, m1.id, { kind: 'DECISION', text: 'go' });
    const open = await addItem(t, c, m1.id, { kind: 'ACTION', text: 'open action' });
    await addItem(t, c, m1.id, { kind: 'ACTION', text: 'done action', completedAt: '2030-01-07T10:00:00Z' });
    await t
      .http()
      .patch(`/api/meetings/${m1.id}`)
      .set('Authorization', c.auth)
      .send({ baseRevision: 1, sharedNotes: 'we talked' })
      .expect(200);
    await setStatus(t, c, m1.id, 'COMPLETED');
    await t.http().post(`/api/items/${carried.id}/carry`).set('Authorization', c.auth).send({}).expect(200);
    const res = await t.http().get(`/api/meetings/${m2.id}`).set('Authorization', c.auth).expect(200);
    expect(res.body.previous).toEqual({
      meetingId: m1.id,
      date: '2030-01-07',
      sharedNotes: 'we talked',
      discussedPoints: [expect.objectContaining({ id: discussed.id })],
      decisions: [expect.objectContaining({ id: decision.id })],
      openActions: [expect.objectContaining({ id: open.id })],
    });
    expect(res.body.items.map((i: any) => i.text)).toEqual(['carried away']);
  });

  it('reads with a fixed number of queries, whatever the number of items', async () => {
    const queries = jest.spyOn(pg.Client.prototype, 'query');
    // The spy sees every query of the process; a background one (a key's lastUsedAt, written at
    // most once a minute) can land inside a read and only ever adds: the fewer of two reads counts.
    const readOnce = async (id: string) => {
      queries.mockClear();
      await t.http().get(`/api/meetings/${id}`).set('Authorization', c.auth).expect(200);
      return queries.mock.calls.length;
    };
    const countFor = async (id: string) => Math.min(await readOnce(id), await readOnce(id));
    const small = await createSeries(t, c);
    await setStatus(t, c, small.meetings[0].id, 'COMPLETED');
    const few = await countFor(small.meetings[1].id);
    const { meetings } = await createSeries(t, c);
    await setStatus(t, c, meetings[0].id, 'COMPLETED');
    for (let i = 0; i < 20; i++)
      await addItem(t, c, meetings[0].id, { text: `p${i}`, kind: i % 2 ? 'ACTION' : 'DECISION' });
    for (let i = 0; i < 20; i++) await addItem(t, c, meetings[1].id, { text: `q${i}` });
    const many = await countFor(meetings[1].id);
    queries.mockRestore();
    expect(many).toBe(few);
    expect(many).toBeGreaterThanOrEqual(4);
    expect(many).toBeLessThanOrEqual(6);
  });

  it('is 404 for another account, a deleted meeting, an unknown id and a malformed id', async () => {
    const { meetings } = await createSeries(t, c);
    const other = await t.caller();
    await t.http().get(`/api/meetings/${meetings[0].id}`).set('Authorization', other.auth).expect(404);
    await t.http().get(`/api/meetings/${MISSING_ID}`).set('Authorization', c.auth).expect(404);
    await t.http().get('/api/meetings/12345').set('Authorization', c.auth).expect(404);
    await t.http().delete(`/api/meetings/${meetings[0].id}`).set('Authorization', c.auth).expect(204);
    await t.http().get(`/api/meetings/${meetings[0].id}`).set('Authorization', c.auth).expect(404);
  });
});

describe('PATCH /api/meetings/:id', () => {
  it('updates sharedNotes with the current baseRevision and increments revision', async () => {
    const { meetings } = await createSeries(t, c);
    const res = await t
      .http()
      .patch(`/api/meetings/${meetings[0].id}`)
      .set('Authorization', c.auth)
      .send({ baseRevision: 1, sharedNotes: 'notes' })
      .expect(200);
    expect(res.body).toMatchObject({ sharedNotes: 'notes', revision: 2, status: 'SCHEDULED' });
  });

  it('answers a stale baseRevision with 409 revision_conflict and the server record in current', async () => {
    const { meetings } = await createSeries(t, c);
    await t
      .http()
      .patch(`/api/meetings/${meetings[0].id}`)
      .set('Authorization', c.auth)
      .send({ baseRevision: 1, sharedNotes: 'theirs' })
      .expect(200);
    const res = await t
      .http()
      .patch(`/api/meetings/${meetings[0].id}`)
      .set('Authorization', c.auth)
      .send({ baseRevision: 1, sharedNotes: 'mine' })
      .expect(409);
    expect(res.body.error.code).toBe('revision_conflict');
    expect(res.body.current).toMatchObject({ id: meetings[0].id, sharedNotes: 'theirs', revision: 2 });
    expect(res.body.error.current).toEqual(res.body.current);
  });

  it('lets exactly one of two concurrent PATCHes with the same baseRevision win', async () => {
    const { meetings } = await createSeries(t, c);
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((s) =>
        t
          .http()
          .patch(`/api/meetings/${meetings[0].id}`)
          .set('Authorization', c.auth)
          .send({ baseRevision: 1, sharedNotes: s }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    const row = await t.db
      .selectFrom('meetings')
      .select('revision')
      .where('id', '=', meetings[0].id)
      .executeTakeFirstOrThrow();
    expect(row.revision).toBe(2);
  });

  it('moves status SCHEDULED -> IN_PROGRESS -> COMPLETED, and SCHEDULED -> SKIPPED', async () => {
    const { meetings } = await createSeries(t, c);
    expect((await setStatus(t, c, meetings[0].id, 'IN_PROGRESS')).status).toBe('IN_PROGRESS');
    expect((await setStatus(t, c, meetings[0].id, 'COMPLETED')).status).toBe('COMPLETED');
    expect((await setStatus(t, c, meetings[1].id, 'SKIPPED')).status).toBe('SKIPPED');
    const { meetings: more } = await createSeries(t, c);
    expect((await setStatus(t, c, more[0].id, 'COMPLETED')).status).toBe('COMPLETED');
    await setStatus(t, c, more[1].id, 'IN_PROGRESS');
    expect((await setStatus(t, c, more[1].id, 'SKIPPED')).status).toBe('SKIPPED');
  });

  it('refuses any other status move with 409 invalid_status_transition', async () => {
    const { meetings } = await createSeries(t, c);
    await setStatus(t, c, meetings[0].id, 'COMPLETED');
    await setStatus(t, c, meetings[1].id, 'IN_PROGRESS');
    for (const [id, status] of [
      [meetings[0].id, 'SCHEDULED'],
      [meetings[0].id, 'IN_PROGRESS'],
      [meetings[0].id, 'SKIPPED'],
      [meetings[1].id, 'SCHEDULED'],
      [meetings[1].id, 'DRAFT'],
    ]) {
      const current = await t.http().get(`/api/meetings/${id}`).set('Authorization', c.auth).expect(200);
      const res = await t
        .http()
        .patch(`/api/meetings/${id}`)
        .set('Authorization', c.auth)
        .send({ baseRevision: current.body.revision, status })
        .expect(409);
      expect(res.body.error.code).toBe('invalid_status_transition');
    }
  });

  it('keeps the parking lot DRAFT (409 on any status change)', async () => {
    const { meetings } = await createSeries(t, c);
    const item = await addItem(t, c, meetings[0].id);
    const carried = await t
      .http()
      .post(`/api/items/${item.id}/carry`)
      .set('Authorization', c.auth)
      .send({ parkingLot: true })
      .expect(200);
    const lot = carried.body.meeting;
    expect(lot).toMatchObject({ status: 'DRAFT', date: null, startsAt: null });
    for (const status of ['SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'SKIPPED']) {
      await t
        .http()
        .patch(`/api/meetings/${lot.id}`)
        .set('Authorization', c.auth)
        .send({ baseRevision: lot.revision, status })
        .expect(409);
    }
    await t
      .http()
      .patch(`/api/meetings/${lot.id}`)
      .set('Authorization', c.auth)
      .send({ baseRevision: lot.revision, status: 'DRAFT', sharedNotes: 'later' })
      .expect(200);
  });

  it('requires baseRevision and rejects unknown fields (400); 404 before the revision check', async () => {
    const { meetings } = await createSeries(t, c);
    for (const body of [
      { sharedNotes: 'x' },
      { baseRevision: 1, title: 'x' },
      { baseRevision: 0 },
      { baseRevision: 1, sharedNotes: 'x'.repeat(50001) },
    ]) {
      await t.http().patch(`/api/meetings/${meetings[0].id}`).set('Authorization', c.auth).send(body).expect(400);
    }
    const other = await t.caller();
    await t
      .http()
      .patch(`/api/meetings/${meetings[0].id}`)
      .set('Authorization', other.auth)
      .send({ baseRevision: 99, sharedNotes: 'x' })
      .expect(404);
  });
});

describe('DELETE /api/meetings/:id', () => {
  it('soft-deletes (204): gone from reads and lists, row kept; second delete 404', async () => {
    const { series, meetings } = await createSeries(t, c);
    const item = await addItem(t, c, meetings[0].id);
    await t.http().delete(`/api/meetings/${meetings[0].id}`).set('Authorization', c.auth).expect(204);
    const list = await t.http().get(`/api/meetings?seriesId=${series.id}`).set('Authorization', c.auth).expect(200);
    expect(list.body.items.map((m: any) => m.id)).toEqual([meetings[1].id]);
    const row = await t.db
      .selectFrom('meetings')
      .select('deleted_at')
      .where('id', '=', meetings[0].id)
      .executeTakeFirstOrThrow();
    expect(row.deleted_at).not.toBeNull();
    await t.http().patch(`/api/items/${item.id}`).set('Authorization', c.auth).send({ text: 'x' }).expect(404);
    await t.http().delete(`/api/meetings/${meetings[0].id}`).set('Authorization', c.auth).expect(404);
    const cookie = await sessionOf(t, c);
    await t.http().delete(`/api/meetings/${meetings[1].id}`).set('Cookie', cookie).expect(204);
  });

  it('needs meetings:write', async () => {
    const { meetings } = await createSeries(t, c);
    const reader = await t.caller(['meetings:read']);
    await t.http().delete(`/api/meetings/${meetings[0].id}`).set('Authorization', reader.auth).expect(403);
  });
});
