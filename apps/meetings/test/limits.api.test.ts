import { sql } from 'kysely';
import { addItem, createSeries, startApp } from './helpers/factories.js';
import type { TestApp } from './helpers/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(() => t.close());

describe('per-account limits (409 with a distinct code)', () => {
  it('allows 5,000 live notes: the next new date is 409 note_limit_reached, updates still work', async () => {
    const c = await t.caller();
    await sql`
      insert into notes (account_id, date, yesterday, today, impediments, today_priority, search_text, revision)
      select ${c.accountId}::uuid, date '2000-01-01' + i, '', '', '{}', '', '', 1 from generate_series(0, 4999) as i`.execute(
      t.db,
    );
    const res = await t
      .http()
      .put('/api/notes/2040-01-01')
      .set('Authorization', c.auth)
      .send({ today: 'one too many' })
      .expect(409);
    expect(res.body.error.code).toBe('note_limit_reached');
    await t
      .http()
      .put('/api/notes/2000-01-01')
      .set('Authorization', c.auth)
      .send({ today: 'update', baseRevision: 1 })
      .expect(200);
    await t.http().delete('/api/notes/2000-01-02').set('Authorization', c.auth).expect(204);
    await t.http().put('/api/notes/2040-01-01').set('Authorization', c.auth).send({ today: 'fits again' }).expect(201);
  });

  it('lets exactly one of several new notes racing for the last slot in, by one statement each or in a transaction', async () => {
    const c = await t.caller();
    await sql`
      insert into notes (account_id, date, yesterday, today, impediments, today_priority, search_text, revision)
      select ${c.accountId}::uuid, date '2000-01-01' + i, '', '', '{}', '', '', 1 from generate_series(0, 4998) as i`.execute(
      t.db,
    );
    const race = await Promise.all(
      [1, 2, 3, 4, 5].map((d) =>
        t.http().put(`/api/notes/2040-02-0${d}`).set('Authorization', c.auth).send({ today: 'racer' }),
      ),
    );
    expect(race.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    for (const r of race.filter((r) => r.status === 409)) expect(r.body.error.code).toBe('note_limit_reached');
    const live = await sql<{
      n: number;
    }>`select count(*)::int as n from notes where account_id = ${c.accountId} and deleted_at is null`.execute(t.db);
    expect(live.rows[0]!.n).toBe(5000);
  });

  it('allows 100 active people: the 101st is 409 person_limit_reached, also when restoring; exactly one of two racing creates wins', async () => {
    const c = await t.caller();
    await sql`insert into people (account_id, name) select ${c.accountId}::uuid, 'P' || i from generate_series(1, 99) as i`.execute(
      t.db,
    );
    const race = await Promise.all(
      [1, 2, 3].map(() => t.http().post('/api/people').set('Authorization', c.auth).send({ name: 'racer' })),
    );
    expect(race.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    const res = await t
      .http()
      .post('/api/people')
      .set('Authorization', c.auth)
      .send({ name: 'one too many' })
      .expect(409);
    expect(res.body.error.code).toBe('person_limit_reached');
    const archived = race.find((r) => r.status === 201)!.body;
    await t.http().delete(`/api/people/${archived.id}`).set('Authorization', c.auth).expect(200);
    await t.http().post('/api/people').set('Authorization', c.auth).send({ name: 'fits' }).expect(201);
    const restore = await t
      .http()
      .patch(`/api/people/${archived.id}`)
      .set('Authorization', c.auth)
      .send({ archived: false })
      .expect(409);
    expect(restore.body.error.code).toBe('person_limit_reached');
  });

  it('allows 50 active series: the 51st is 409 series_limit_reached', async () => {
    const c = await t.caller();
    await sql`
      insert into series (account_id, title, cadence, weekday, start_time, duration_minutes, timezone, start_date)
      select ${c.accountId}::uuid, 'S' || i, 'WEEKLY', 1, '09:00', 30, 'UTC', date '2030-01-01' from generate_series(1, 50) as i`.execute(
      t.db,
    );
    const res = await t
      .http()
      .post('/api/series')
      .set('Authorization', c.auth)
      .send({
        title: 'x',
        cadence: 'WEEKLY',
        weekday: 1,
        startTime: '09:00',
        durationMinutes: 30,
        timezone: 'UTC',
        startDate: '2030-01-01',
      })
      .expect(409);
    expect(res.body.error.code).toBe('series_limit_reached');
  });

  it('allows 5,000 meetings: creating, materializing or opening a parking lot beyond is 409 meeting_limit_reached', async () => {
    const c = await t.caller();
    const { series, meetings } = await createSeries(t, c);
    const item = await addItem(t, c, meetings[1].id);
    await sql`
      insert into meetings (account_id, series_id, date, starts_at, status)
      select ${c.accountId}::uuid, ${series.id}::uuid, date '2040-01-01' + i, now(), 'COMPLETED' from generate_series(1, 4998) as i`.execute(
      t.db,
    );
    const create = await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: series.id, date: '2030-01-08' })
      .expect(409);
    expect(create.body.error.code).toBe('meeting_limit_reached');
    const carry = await t.http().post(`/api/items/${item.id}/carry`).set('Authorization', c.auth).send({}).expect(409);
    expect(carry.body.error.code).toBe('meeting_limit_reached');
    const lot = await t
      .http()
      .post(`/api/items/${item.id}/carry`)
      .set('Authorization', c.auth)
      .send({ parkingLot: true })
      .expect(409);
    expect(lot.body.error.code).toBe('meeting_limit_reached');
    const newSeries = await t
      .http()
      .post('/api/series')
      .set('Authorization', c.auth)
      .send({
        title: 'x',
        cadence: 'WEEKLY',
        weekday: 1,
        startTime: '09:00',
        durationMinutes: 30,
        timezone: 'UTC',
        startDate: '2030-01-01',
      })
      .expect(409);
    expect(newSeries.body.error.code).toBe('meeting_limit_reached');
    expect(await t.db.selectFrom('series').select('id').where('account_id', '=', c.accountId).execute()).toHaveLength(
      1,
    );
  });

  it('allows 200 items per meeting: adding or carrying one more is 409 item_limit_reached', async () => {
    const c = await t.caller();
    const { meetings } = await createSeries(t, c);
    await sql`
      insert into items (account_id, meeting_id, kind, text, position)
      select ${c.accountId}::uuid, ${meetings[1].id}::uuid, 'TALKING_POINT', 'p' || i, i from generate_series(0, 199) as i`.execute(
      t.db,
    );
    const add = await t
      .http()
      .post(`/api/meetings/${meetings[1].id}/items`)
      .set('Authorization', c.auth)
      .send({ kind: 'ACTION', text: 'x' })
      .expect(409);
    expect(add.body.error.code).toBe('item_limit_reached');
    const source = await addItem(t, c, meetings[0].id);
    const carry = await t
      .http()
      .post(`/api/items/${source.id}/carry`)
      .set('Authorization', c.auth)
      .send({})
      .expect(409);
    expect(carry.body.error.code).toBe('item_limit_reached');
    const row = await t.db.selectFrom('items').select('status').where('id', '=', source.id).executeTakeFirstOrThrow();
    expect(row.status).toBe('OPEN');
  });

  it('answers a body over 128 KB with 413', async () => {
    const c = await t.caller();
    const res = await t
      .http()
      .put('/api/notes/2030-01-01')
      .set('Authorization', c.auth)
      .send({ yesterday: 'x'.repeat(132 * 1024) })
      .expect(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });
});
