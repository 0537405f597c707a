import { addItem, createSeries, sessionOf, setStatus, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
let cookie: string;
let series: any;
let meeting: any;
const SECRET = 'confidential salary worries';

beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
  cookie = await sessionOf(t, c);
  const created = await createSeries(t, c);
  series = created.series;
  meeting = created.meetings[0];
  const res = await t
    .http()
    .patch(`/api/meetings/${meeting.id}`)
    .set('Cookie', cookie)
    .send({ baseRevision: 1, sharedNotes: 'shared salary review', privateNotes: SECRET })
    .expect(200);
  // A session's own write echoes its private notes.
  expect(res.body.privateNotes).toBe(SECRET);
});
afterAll(() => t.close());

const asKey = (req: any) => req.set('Authorization', c.auth);
const asSession = (req: any) => req.set('Cookie', cookie);

describe('privateNotes for API keys', () => {
  it('never appear in GET one, even with includePrivate=1', async () => {
    for (const q of ['', '?includePrivate=1']) {
      const res = await asKey(t.http().get(`/api/meetings/${meeting.id}${q}`)).expect(200);
      expect(res.body).not.toHaveProperty('privateNotes');
      expect(JSON.stringify(res.body)).not.toContain('confidential');
    }
  });

  it('never appear in lists, even with includePrivate=1', async () => {
    const res = await asKey(t.http().get(`/api/meetings?seriesId=${series.id}&includePrivate=1`)).expect(200);
    expect(res.body.items.every((m: any) => !('privateNotes' in m))).toBe(true);
  });

  it('never appear in PATCH echoes', async () => {
    const current = await asKey(t.http().get(`/api/meetings/${meeting.id}`)).expect(200);
    const res = await asKey(t.http().patch(`/api/meetings/${meeting.id}`))
      .send({ baseRevision: current.body.revision, sharedNotes: 'shared salary review' })
      .expect(200);
    expect(res.body).not.toHaveProperty('privateNotes');
  });

  it('never appear in a 409 current record', async () => {
    const res = await asKey(t.http().patch(`/api/meetings/${meeting.id}`))
      .send({ baseRevision: 1, sharedNotes: 'stale' })
      .expect(409);
    expect(res.body.current).toMatchObject({ id: meeting.id });
    expect(res.body.current).not.toHaveProperty('privateNotes');
    expect(res.body.error.current).not.toHaveProperty('privateNotes');
    expect(JSON.stringify(res.body)).not.toContain('confidential');
  });

  it('cannot be written: privateNotes in PATCH or POST is 403 private_notes_forbidden and nothing changes', async () => {
    const current = await asKey(t.http().get(`/api/meetings/${meeting.id}`)).expect(200);
    const patch = await asKey(t.http().patch(`/api/meetings/${meeting.id}`))
      .send({ baseRevision: current.body.revision, privateNotes: 'overwritten' })
      .expect(403);
    expect(patch.body.error.code).toBe('private_notes_forbidden');
    const post = await asKey(t.http().post('/api/meetings'))
      .send({ seriesId: series.id, date: '2030-05-01', privateNotes: 'x' })
      .expect(403);
    expect(post.body.error.code).toBe('private_notes_forbidden');
    const row = await t.db
      .selectFrom('meetings')
      .select('private_notes')
      .where('id', '=', meeting.id)
      .executeTakeFirstOrThrow();
    expect(row.private_notes).toBe(SECRET);
  });

  it('are never searched, nor shown in snippets, even with includePrivate=1', async () => {
    const onlyPrivate = await asKey(t.http().get('/api/search?q=confidential&includePrivate=1')).expect(200);
    expect(onlyPrivate.body).toEqual({ results: [], hasMore: false });
    const both = await asKey(t.http().get('/api/search?q=salary&includePrivate=1')).expect(200);
    expect(both.body.results).toHaveLength(1);
    expect(both.body.results[0]).toMatchObject({ matchField: 'sharedNotes', snippet: 'shared salary review' });
  });
});

describe('privateNotes for browser sessions', () => {
  it('appear on reads only with includePrivate=1', async () => {
    const without = await asSession(t.http().get(`/api/meetings/${meeting.id}`)).expect(200);
    expect(without.body).not.toHaveProperty('privateNotes');
    const one = await asSession(t.http().get(`/api/meetings/${meeting.id}?includePrivate=1`)).expect(200);
    expect(one.body.privateNotes).toBe(SECRET);
    const list = await asSession(t.http().get(`/api/meetings?seriesId=${series.id}&includePrivate=1`)).expect(200);
    expect(list.body.items.find((m: any) => m.id === meeting.id).privateNotes).toBe(SECRET);
    await asSession(t.http().get(`/api/meetings/${meeting.id}?includePrivate=yes`)).expect(400);
  });

  it("appear in a session's 409 current record, so it can merge", async () => {
    const res = await asSession(t.http().patch(`/api/meetings/${meeting.id}`))
      .send({ baseRevision: 1, privateNotes: 'stale' })
      .expect(409);
    expect(res.body.current.privateNotes).toBe(SECRET);
  });

  it('can be created with a meeting by a session', async () => {
    const res = await asSession(t.http().post('/api/meetings'))
      .send({ seriesId: series.id, date: '2030-06-03', privateNotes: 'prep' })
      .expect(201);
    expect(res.body.privateNotes).toBe('prep');
  });

  it('are searched only with includePrivate=1, reported as matchField privateNotes', async () => {
    const off = await asSession(t.http().get('/api/search?q=confidential')).expect(200);
    expect(off.body.results).toEqual([]);
    const on = await asSession(t.http().get('/api/search?q=confidential&includePrivate=1')).expect(200);
    expect(on.body.results).toEqual([
      expect.objectContaining({ type: 'meeting', id: meeting.id, matchField: 'privateNotes', snippet: SECRET }),
    ]);
  });

  it('never appear in carry responses, not even for a session', async () => {
    const { meetings } = await createSeries(t, c);
    await asSession(t.http().patch(`/api/meetings/${meetings[1].id}`))
      .send({ baseRevision: 1, privateNotes: 'target secret' })
      .expect(200);
    const item = await addItem(t, c, meetings[0].id);
    const one = await asSession(t.http().post(`/api/items/${item.id}/carry`))
      .send({})
      .expect(200);
    expect(one.body.meeting.id).toBe(meetings[1].id);
    expect(one.body.meeting).not.toHaveProperty('privateNotes');
    const lot = await asKey(t.http().post(`/api/items/${one.body.item.id}/carry`))
      .send({ parkingLot: true })
      .expect(200);
    expect(lot.body.meeting).not.toHaveProperty('privateNotes');
    await addItem(t, c, meetings[0].id, { text: 'second' });
    await setStatus(t, c, meetings[0].id, 'COMPLETED');
    const all = await asSession(t.http().post(`/api/meetings/${meetings[0].id}/carry`))
      .send({})
      .expect(200);
    expect(all.body.meeting).not.toHaveProperty('privateNotes');
    expect(JSON.stringify(all.body)).not.toContain('target secret');
  });
});
