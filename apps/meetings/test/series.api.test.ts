import { compileBody } from '@app/http-errors/validation';
import { DateTime } from 'luxon';
import { createPerson, createSeries, MISSING_ID, sessionOf, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
});
afterAll(() => t.close());

const base = {
  title: '1:1',
  cadence: 'WEEKLY',
  weekday: 1,
  startTime: '09:00',
  durationMinutes: 30,
  timezone: 'Europe/Berlin',
  startDate: '2030-01-07',
};
const post = (body: object, who: Caller = c) => t.http().post('/api/series').set('Authorization', who.auth).send(body);

describe('POST /api/series', () => {
  it('creates the series and its next two weekly occurrences (201), start instants in UTC', async () => {
    const person = await createPerson(t, c);
    const res = await post({ ...base, participantIds: [person.id] }).expect(201);
    expect(res.body.series).toEqual({
      id: expect.any(String),
      title: '1:1',
      cadence: 'WEEKLY',
      weekday: 1,
      monthDay: null,
      startTime: '09:00',
      durationMinutes: 30,
      timezone: 'Europe/Berlin',
      startDate: '2030-01-07',
      participantIds: [person.id],
      template: [],
      archived: false,
      archivedAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(res.body.meetings.map((m: any) => [m.date, m.startsAt, m.status, m.revision])).toEqual([
      ['2030-01-07', '2030-01-07T08:00:00Z', 'SCHEDULED', 1],
      ['2030-01-14', '2030-01-14T08:00:00Z', 'SCHEDULED', 1],
    ]);
    expect(res.body.meetings[0]).not.toHaveProperty('privateNotes');
    const rows = await t.db
      .selectFrom('meetings')
      .select('series_id')
      .where('series_id', '=', res.body.series.id)
      .execute();
    expect(rows).toHaveLength(2);
  });

  it('starts weekly series on the first matching weekday on or after startDate', async () => {
    const res = await post({ ...base, weekday: 4, startDate: '2030-01-01' }).expect(201);
    expect(res.body.meetings.map((m: any) => m.date)).toEqual(['2030-01-03', '2030-01-10']);
  });

  it('steps BIWEEKLY series by two weeks', async () => {
    const res = await post({ ...base, cadence: 'BIWEEKLY', weekday: 3, startDate: '2030-01-01' }).expect(201);
    expect(res.body.meetings.map((m: any) => m.date)).toEqual(['2030-01-02', '2030-01-16']);
  });

  it('clamps MONTHLY monthDay to the last day of shorter months', async () => {
    const res = await post({
      ...base,
      cadence: 'MONTHLY',
      weekday: undefined,
      monthDay: 31,
      startDate: '2030-02-01',
    }).expect(201);
    expect(res.body.series).toMatchObject({ cadence: 'MONTHLY', monthDay: 31, weekday: null });
    expect(res.body.meetings.map((m: any) => m.date)).toEqual(['2030-02-28', '2030-03-31']);
    const leap = await post({
      ...base,
      cadence: 'MONTHLY',
      weekday: undefined,
      monthDay: 30,
      startDate: '2032-02-01',
    }).expect(201);
    expect(leap.body.meetings.map((m: any) => m.date)).toEqual(['2032-02-29', '2032-03-30']);
  });

  it('computes start instants across DST in the series zone', async () => {
    const berlin = await post({ ...base, startDate: '2030-03-25' }).expect(201);
    // 2030-03-31 is the change to summer time in Berlin: 09:00 is 08:00Z before and 07:00Z after.
    expect(berlin.body.meetings.map((m: any) => m.startsAt)).toEqual(['2030-03-25T08:00:00Z', '2030-04-01T07:00:00Z']);
    // 02:30 does not exist in New York on 2030-03-10: it moves forward to 03:30 EDT.
    const ny = await post({
      ...base,
      weekday: 0,
      startTime: '02:30',
      timezone: 'America/New_York',
      startDate: '2030-03-10',
    }).expect(201);
    expect(ny.body.meetings.map((m: any) => m.startsAt)).toEqual(['2030-03-10T07:30:00Z', '2030-03-17T06:30:00Z']);
  });

  it('starts a series whose startDate has passed from today in its zone', async () => {
    const res = await post({ ...base, startDate: '2020-01-06', timezone: 'Pacific/Auckland' }).expect(201);
    const today = DateTime.now().setZone('Pacific/Auckland').toISODate()!;
    const [first, second] = res.body.meetings.map((m: any) => m.date);
    expect(first >= today).toBe(true);
    expect(DateTime.fromISO(first).weekday).toBe(1);
    expect(DateTime.fromISO(second).diff(DateTime.fromISO(first), 'days').days).toBe(7);
    expect(DateTime.fromISO(first).diff(DateTime.fromISO(today), 'days').days).toBeLessThan(7);
  });

  it('rejects invalid schedules and fields with 400', async () => {
    const bad = [
      { ...base, weekday: undefined },
      { ...base, monthDay: 3 },
      { ...base, cadence: 'MONTHLY' },
      { ...base, cadence: 'DAILY' },
      { ...base, weekday: 7 },
      { ...base, startTime: '24:00' },
      { ...base, startTime: '9:00' },
      { ...base, durationMinutes: 0 },
      { ...base, durationMinutes: 1441 },
      { ...base, timezone: 'Mars/Olympus' },
      { ...base, startDate: '2030-02-30' },
      { ...base, title: '' },
      { ...base, participantIds: [MISSING_ID, MISSING_ID] },
      {
        ...base,
        participantIds: Array.from(
          { length: 21 },
          (_, i) => `00000000-0000-4000-8000-0000000000${String(i).padStart(2, '0')}`,
        ),
      },
      { ...base, participantIds: ['nope'] },
      { ...base, color: 'red' },
    ];
    for (const body of bad) {
      const res = await post(body);
      expect([res.status, JSON.stringify(body)]).toEqual([400, JSON.stringify(body)]);
    }
  });

  it('states the cadence rule in its published schema: each schedule the service refuses, the document refuses too', async () => {
    const doc = (await t.http().get('/openapi.json').expect(200)).body;
    const schema = compileBody(doc.paths['/api/series'].post.requestBody.content['application/json'].schema);
    const { weekday: _weekday, ...noWeekday } = base;
    const cases = [
      { ...noWeekday },
      { ...noWeekday, cadence: 'BIWEEKLY' },
      { ...base, monthDay: 3 },
      { ...noWeekday, cadence: 'MONTHLY' },
      { ...base, cadence: 'MONTHLY', monthDay: 3 },
    ];
    for (const body of cases) {
      const res = await post(body);
      expect([JSON.stringify(body), res.status, schema.validate(body)]).toEqual([JSON.stringify(body), 400, false]);
    }
    expect(schema.validate({ ...noWeekday, cadence: 'MONTHLY', monthDay: 3 })).toBe(true);
    expect(schema.validate(base)).toBe(true);
  });

  it('needs participants that exist for the account (404) and are not archived (409)', async () => {
    const other = await t.caller();
    const theirs = await createPerson(t, other);
    const missing = await post({ ...base, participantIds: [theirs.id] }).expect(404);
    expect(missing.body.error.code).toBe('person_not_found');
    const gone = await createPerson(t, c, 'Gone');
    await t.http().delete(`/api/people/${gone.id}`).set('Authorization', c.auth).expect(200);
    const archived = await post({ ...base, participantIds: [gone.id] }).expect(409);
    expect(archived.body.error.code).toBe('person_archived');
  });

  it('accepts 20 participants', async () => {
    const owner = await t.caller();
    const ids = [];
    for (let i = 0; i < 20; i++) ids.push((await createPerson(t, owner, `P${i}`)).id);
    const res = await post({ ...base, participantIds: ids }, owner).expect(201);
    expect(res.body.series.participantIds).toEqual(ids);
  });
});

describe('PATCH /api/series/:id', () => {
  it('updates the title and re-times upcoming SCHEDULED occurrences when startTime changes', async () => {
    const { series, meetings } = await createSeries(t, c);
    const res = await t
      .http()
      .patch(`/api/series/${series.id}`)
      .set('Authorization', c.auth)
      .send({ title: 'Weekly 1:1', startTime: '10:30', durationMinutes: 45 })
      .expect(200);
    expect(res.body).toMatchObject({ title: 'Weekly 1:1', startTime: '10:30', durationMinutes: 45 });
    const list = await t.http().get(`/api/meetings?seriesId=${series.id}`).set('Authorization', c.auth).expect(200);
    expect(list.body.items.map((m: any) => m.startsAt)).toEqual(['2030-01-07T09:30:00Z', '2030-01-14T09:30:00Z']);
    expect(list.body.items[0].id).toBe(meetings[0].id);
  });

  it('changes the weekday of later materializations, refuses monthDay on a weekly series (400)', async () => {
    const { series } = await createSeries(t, c);
    await t.http().patch(`/api/series/${series.id}`).set('Authorization', c.auth).send({ weekday: 3 }).expect(200);
    const bad = await t
      .http()
      .patch(`/api/series/${series.id}`)
      .set('Authorization', c.auth)
      .send({ monthDay: 3 })
      .expect(400);
    expect(bad.body.error.details[0].path).toBe('/monthDay');
    await t
      .http()
      .patch(`/api/series/${series.id}`)
      .set('Authorization', c.auth)
      .send({ cadence: 'MONTHLY' })
      .expect(400);
    await t.http().patch(`/api/series/${series.id}`).set('Authorization', c.auth).send({}).expect(400);
  });

  it('replaces participants, checking they exist', async () => {
    const { series } = await createSeries(t, c);
    const grace = await createPerson(t, c, 'Grace');
    const res = await t
      .http()
      .patch(`/api/series/${series.id}`)
      .set('Authorization', c.auth)
      .send({ participantIds: [grace.id] })
      .expect(200);
    expect(res.body.participantIds).toEqual([grace.id]);
    await t
      .http()
      .patch(`/api/series/${series.id}`)
      .set('Authorization', c.auth)
      .send({ participantIds: [MISSING_ID] })
      .expect(404);
  });

  it('is 409 series_archived on an archived series and 404 for another account', async () => {
    const { series } = await createSeries(t, c);
    const other = await t.caller();
    await t.http().patch(`/api/series/${series.id}`).set('Authorization', other.auth).send({ title: 'x' }).expect(404);
    await t.http().delete(`/api/series/${series.id}`).set('Authorization', other.auth).expect(404);
    await t.http().delete(`/api/series/${series.id}`).set('Authorization', c.auth).expect(200);
    const res = await t
      .http()
      .patch(`/api/series/${series.id}`)
      .set('Authorization', c.auth)
      .send({ title: 'x' })
      .expect(409);
    expect(res.body.error.code).toBe('series_archived');
  });
});

describe('DELETE /api/series/:id', () => {
  it('archives (200), keeps its meetings, and hides it from the default list', async () => {
    const owner = await t.caller();
    const { series, meetings } = await createSeries(t, owner);
    const res = await t.http().delete(`/api/series/${series.id}`).set('Authorization', owner.auth).expect(200);
    expect(res.body).toMatchObject({ id: series.id, archived: true, archivedAt: expect.any(String) });
    await t.http().get(`/api/meetings/${meetings[0].id}`).set('Authorization', owner.auth).expect(200);
    const list = await t.http().get('/api/series').set('Authorization', owner.auth).expect(200);
    expect(list.body.items).toEqual([]);
    const all = await t.http().get('/api/series?includeArchived=1').set('Authorization', owner.auth).expect(200);
    expect(all.body.items.map((s: any) => s.id)).toEqual([series.id]);
    await t.http().delete('/api/series/nope').set('Authorization', owner.auth).expect(404);
  });
});

describe('GET /api/series', () => {
  it('pages series oldest first', async () => {
    const owner = await t.caller();
    const a = await createSeries(t, owner, { title: 'A' });
    const b = await createSeries(t, owner, { title: 'B' });
    const first = await t.http().get('/api/series?limit=1').set('Authorization', owner.auth).expect(200);
    expect(first.body.items.map((s: any) => s.id)).toEqual([a.series.id]);
    const second = await t
      .http()
      .get(`/api/series?limit=1&cursor=${first.body.nextCursor}`)
      .set('Authorization', owner.auth)
      .expect(200);
    expect(second.body).toEqual({ items: [expect.objectContaining({ id: b.series.id })], nextCursor: null });
  });

  it('shows a session privateNotes (empty) on the meetings it creates, never a key', async () => {
    const cookie = await sessionOf(t, c);
    const res = await t.http().post('/api/series').set('Cookie', cookie).send(base).expect(201);
    expect(res.body.meetings[0].privateNotes).toBe('');
  });
});
