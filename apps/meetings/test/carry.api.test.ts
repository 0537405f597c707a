import { addItem, createSeries, MISSING_ID, setStatus, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
});
afterAll(() => t.close());

const carry = (id: string, body: object = {}, who: Caller = c) =>
  t.http().post(`/api/items/${id}/carry`).set('Authorization', who.auth).send(body);
const carryAll = (id: string, body: object = {}) =>
  t.http().post(`/api/meetings/${id}/carry`).set('Authorization', c.auth).send(body);
const itemRow = (id: string) => t.db.selectFrom('items').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('POST /api/items/:id/carry', () => {
  it('with {} moves the point to the next scheduled occurrence: source CARRIED, copy OPEN at the end with provenance', async () => {
    const { meetings } = await createSeries(t, c);
    const [m1, m2] = meetings;
    const existing = await addItem(t, c, m2.id, { text: 'already there' });
    const source = await addItem(t, c, m1.id, { text: 'Promotion', notes: 'context', starred: true });
    const res = await carry(source.id).expect(200);
    expect(res.body.meeting).toMatchObject({ id: m2.id, date: '2030-01-14', status: 'SCHEDULED' });
    expect(res.body.item).toMatchObject({
      meetingId: m2.id,
      text: 'Promotion',
      notes: 'context',
      starred: true,
      kind: 'TALKING_POINT',
      status: 'OPEN',
      carryCount: 1,
      position: existing.position + 1,
      parentId: null,
      provenance: { fromItemId: source.id, fromMeetingId: m1.id, carriedAt: expect.any(String) },
    });
    expect((await itemRow(source.id)).status).toBe('CARRIED');
  });

  it('increments carryCount on each carry of a copy', async () => {
    const { meetings } = await createSeries(t, c);
    const source = await addItem(t, c, meetings[0].id);
    const first = await carry(source.id).expect(200);
    const second = await carry(first.body.item.id).expect(200);
    expect(second.body.item).toMatchObject({
      carryCount: 2,
      provenance: { fromItemId: first.body.item.id, fromMeetingId: meetings[1].id },
    });
    expect(second.body.meeting.date).toBe('2030-01-21');
  });

  it('with {} materializes the next occurrence of the rule when no later one is open', async () => {
    const { series, meetings } = await createSeries(t, c);
    await setStatus(t, c, meetings[1].id, 'SKIPPED');
    const source = await addItem(t, c, meetings[0].id);
    const res = await carry(source.id).expect(200);
    expect(res.body.meeting).toMatchObject({
      seriesId: series.id,
      date: '2030-01-21',
      startsAt: '2030-01-21T08:00:00Z',
      status: 'SCHEDULED',
      revision: 1,
    });
    const list = await t.http().get(`/api/meetings?seriesId=${series.id}`).set('Authorization', c.auth).expect(200);
    expect(list.body.items.map((m: any) => m.date)).toEqual(['2030-01-07', '2030-01-14', '2030-01-21']);
  });

  it('with { targetMeetingId } uses a later SCHEDULED or IN_PROGRESS occurrence of the same series', async () => {
    const { series, meetings } = await createSeries(t, c);
    const later = await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: series.id, date: '2030-02-04' })
      .expect(201);
    await setStatus(t, c, later.body.id, 'IN_PROGRESS');
    const source = await addItem(t, c, meetings[0].id);
    const res = await carry(source.id, { targetMeetingId: later.body.id }).expect(200);
    expect(res.body.meeting.id).toBe(later.body.id);
    expect(res.body.item.meetingId).toBe(later.body.id);
  });

  it('refuses an earlier, same, finished or other-series target with 409 invalid_carry_target, an unknown one with 404', async () => {
    const { meetings } = await createSeries(t, c);
    const other = await createSeries(t, c);
    const source = await addItem(t, c, meetings[1].id);
    await setStatus(t, c, meetings[0].id, 'SKIPPED');
    for (const target of [meetings[0].id, meetings[1].id, other.meetings[1].id]) {
      const res = await carry(source.id, { targetMeetingId: target }).expect(409);
      expect(res.body.error.code).toBe('invalid_carry_target');
    }
    const stranger = await t.caller();
    const theirs = await createSeries(t, stranger);
    for (const target of [MISSING_ID, theirs.meetings[1].id]) {
      const res = await carry(source.id, { targetMeetingId: target }).expect(404);
      expect(res.body.error.code).toBe('target_not_found');
    }
    expect((await itemRow(source.id)).status).toBe('OPEN');
  });

  it("with { parkingLot: true } creates the series' undated DRAFT meeting once and reuses it", async () => {
    const { series, meetings } = await createSeries(t, c);
    const a = await addItem(t, c, meetings[0].id, { text: 'a' });
    const b = await addItem(t, c, meetings[1].id, { text: 'b' });
    const first = await carry(a.id, { parkingLot: true }).expect(200);
    expect(first.body.meeting).toMatchObject({ seriesId: series.id, date: null, startsAt: null, status: 'DRAFT' });
    const second = await carry(b.id, { parkingLot: true }).expect(200);
    expect(second.body.meeting.id).toBe(first.body.meeting.id);
    expect(second.body.item.position).toBe(first.body.item.position + 1);
    const again = await carry(first.body.item.id, { parkingLot: true }).expect(409);
    expect(again.body.error.code).toBe('already_in_parking_lot');
    // From the parking lot, {} goes to the next open occurrence from today on.
    const back = await carry(first.body.item.id).expect(200);
    expect(back.body.meeting.id).toBe(meetings[0].id);
  });

  it('refuses targetMeetingId together with parkingLot, and unknown fields, with 400', async () => {
    const { meetings } = await createSeries(t, c);
    const source = await addItem(t, c, meetings[0].id);
    await carry(source.id, { targetMeetingId: meetings[1].id, parkingLot: true }).expect(400);
    await carry(source.id, { meetingId: meetings[1].id }).expect(400);
    await carry(source.id, { parkingLot: 'yes' }).expect(400);
    await carry(source.id, { targetMeetingId: 'x' }).expect(400);
    expect((await itemRow(source.id)).status).toBe('OPEN');
  });

  it('only carries an OPEN top-level TALKING_POINT (409 not_carryable)', async () => {
    const { meetings } = await createSeries(t, c);
    const action = await addItem(t, c, meetings[0].id, { kind: 'ACTION', text: 'act' });
    const decision = await addItem(t, c, meetings[0].id, { kind: 'DECISION', text: 'dec' });
    const parent = await addItem(t, c, meetings[0].id);
    const nested = await addItem(t, c, meetings[0].id, { parentId: parent.id });
    const carried = await addItem(t, c, meetings[0].id);
    await carry(carried.id).expect(200);
    for (const id of [action.id, decision.id, nested.id, carried.id]) {
      const res = await carry(id).expect(409);
      expect(res.body.error.code).toBe('not_carryable');
    }
  });

  it('refuses to carry within an archived series (409 series_archived)', async () => {
    const { series, meetings } = await createSeries(t, c);
    const source = await addItem(t, c, meetings[0].id);
    await t.http().delete(`/api/series/${series.id}`).set('Authorization', c.auth).expect(200);
    const res = await carry(source.id).expect(409);
    expect(res.body.error.code).toBe('series_archived');
    await carry(source.id, { parkingLot: true }).expect(409);
  });

  it("is 404 for another account's item and a malformed id", async () => {
    const { meetings } = await createSeries(t, c);
    const source = await addItem(t, c, meetings[0].id);
    const stranger = await t.caller();
    await carry(source.id, {}, stranger).expect(404);
    await carry('not-an-id').expect(404);
  });

  it('leaves exactly one copy when the same item is carried concurrently', async () => {
    const { meetings } = await createSeries(t, c);
    const source = await addItem(t, c, meetings[0].id);
    const results = await Promise.all(Array.from({ length: 6 }, () => carry(source.id)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.error.code === 'not_carryable')).toBe(true);
    const copies = await t.db.selectFrom('items').select('id').where('from_item_id', '=', source.id).execute();
    expect(copies).toHaveLength(1);
  });

  it('creates one parking lot when different items are carried there concurrently', async () => {
    const { series, meetings } = await createSeries(t, c);
    const sources = [];
    for (let i = 0; i < 5; i++) sources.push(await addItem(t, c, meetings[0].id, { text: `p${i}` }));
    const results = await Promise.all(sources.map((s) => carry(s.id, { parkingLot: true })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const lots = await t.db
      .selectFrom('meetings')
      .select('id')
      .where('series_id', '=', series.id)
      .where('date', 'is', null)
      .execute();
    expect(lots).toHaveLength(1);
    const positions = (
      await t.db.selectFrom('items').select('position').where('meeting_id', '=', lots[0]!.id).execute()
    )
      .map((r) => r.position)
      .sort();
    expect(positions).toEqual([0, 1, 2, 3, 4]);
  });

  it('materializes one occurrence when two items are carried forward concurrently', async () => {
    const { series, meetings } = await createSeries(t, c);
    await setStatus(t, c, meetings[1].id, 'COMPLETED');
    const a = await addItem(t, c, meetings[0].id);
    const b = await addItem(t, c, meetings[0].id);
    const results = await Promise.all([carry(a.id), carry(b.id)]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(results[0].body.meeting.id).toBe(results[1].body.meeting.id);
    const rows = await t.db.selectFrom('meetings').select('date').where('series_id', '=', series.id).execute();
    expect(rows).toHaveLength(3);
  });
});

describe('POST /api/meetings/:id/carry', () => {
  it('refuses a meeting that is not COMPLETED or SKIPPED (409 meeting_not_finished)', async () => {
    const { meetings } = await createSeries(t, c);
    await addItem(t, c, meetings[0].id);
    const res = await carryAll(meetings[0].id).expect(409);
    expect(res.body.error.code).toBe('meeting_not_finished');
    await setStatus(t, c, meetings[0].id, 'IN_PROGRESS');
    await carryAll(meetings[0].id).expect(409);
  });

  it('carries every open top-level talking point of a COMPLETED meeting, in order, to the next scheduled meeting', async () => {
    const { meetings } = await createSeries(t, c);
    const [m1, m2] = meetings;
    const p1 = await addItem(t, c, m1.id, { text: 'one' });
    await addItem(t, c, m1.id, { kind: 'ACTION', text: 'action stays' });
    await addItem(t, c, m1.id, { kind: 'DECISION', text: 'decision stays' });
    await addItem(t, c, m1.id, { text: 'nested stays', parentId: p1.id });
    const p2 = await addItem(t, c, m1.id, { text: 'two' });
    const gone = await addItem(t, c, m1.id, { text: 'already carried' });
    await carry(gone.id, { parkingLot: true }).expect(200);
    await setStatus(t, c, m1.id, 'COMPLETED');
    const res = await carryAll(m1.id).expect(200);
    expect(res.body.meeting.id).toBe(m2.id);
    expect(res.body.items.map((i: any) => [i.text, i.carryCount, i.provenance.fromItemId])).toEqual([
      ['one', 1, p1.id],
      ['two', 1, p2.id],
    ]);
    expect((await itemRow(p1.id)).status).toBe('CARRIED');
    expect((await itemRow(p2.id)).status).toBe('CARRIED');
    const again = await carryAll(m1.id).expect(200);
    expect(again.body.items).toEqual([]);
  });

  it('goes to the parking lot when no later occurrence is open, and to a chosen target when named', async () => {
    const { series, meetings } = await createSeries(t, c);
    await addItem(t, c, meetings[1].id, { text: 'late point' });
    await setStatus(t, c, meetings[1].id, 'SKIPPED');
    const res = await carryAll(meetings[1].id).expect(200);
    expect(res.body.meeting).toMatchObject({ date: null, status: 'DRAFT' });
    expect(res.body.items.map((i: any) => i.text)).toEqual(['late point']);
    const later = await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: series.id, date: '2030-03-04' })
      .expect(201);
    await addItem(t, c, meetings[0].id, { text: 'early point' });
    await setStatus(t, c, meetings[0].id, 'COMPLETED');
    const chosen = await carryAll(meetings[0].id, { targetMeetingId: later.body.id }).expect(200);
    expect(chosen.body.meeting.id).toBe(later.body.id);
    await carryAll(meetings[0].id, { targetMeetingId: meetings[1].id }).expect(409);
  });

  it('copies each point once when the same meeting is carried concurrently', async () => {
    const { meetings } = await createSeries(t, c);
    for (let i = 0; i < 3; i++) await addItem(t, c, meetings[0].id, { text: `p${i}` });
    await setStatus(t, c, meetings[0].id, 'COMPLETED');
    const results = await Promise.all([carryAll(meetings[0].id), carryAll(meetings[0].id), carryAll(meetings[0].id)]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(results.map((r) => r.body.items.length).sort()).toEqual([0, 0, 3]);
    const copies = await t.db.selectFrom('items').select('id').where('meeting_id', '=', meetings[1].id).execute();
    expect(copies).toHaveLength(3);
  });

  it("is 404 for another account's meeting and 409 in an archived series", async () => {
    const { series, meetings } = await createSeries(t, c);
    await setStatus(t, c, meetings[0].id, 'COMPLETED');
    const stranger = await t.caller();
    await t
      .http()
      .post(`/api/meetings/${meetings[0].id}/carry`)
      .set('Authorization', stranger.auth)
      .send({})
      .expect(404);
    await t.http().delete(`/api/series/${series.id}`).set('Authorization', c.auth).expect(200);
    const res = await carryAll(meetings[0].id).expect(409);
    expect(res.body.error.code).toBe('series_archived');
  });
});
