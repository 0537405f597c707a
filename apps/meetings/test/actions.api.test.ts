import { sql } from 'kysely';
import { addItem, createPerson, createSeries, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
let ada: any;
let grace: any;
let seriesAda: any;
let seriesGrace: any;
const ids: Record<string, string> = {};
beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
  seriesAda = await createSeries(t, c);
  ada = seriesAda.person;
  grace = await createPerson(t, c, 'Grace');
  seriesGrace = await createSeries(t, c, { title: '1:1 with Grace', participantIds: [grace.id], weekday: 2 });
  const m = seriesAda.meetings[0].id;
  const g = seriesGrace.meetings[0].id;
  ids.late = (await addItem(t, c, m, { kind: 'ACTION', text: 'late', dueDate: '2030-03-01' })).id;
  ids.early = (await addItem(t, c, m, { kind: 'ACTION', text: 'early', dueDate: '2030-01-10' })).id;
  ids.none = (await addItem(t, c, m, { kind: 'ACTION', text: 'no due date' })).id;
  ids.done = (
    await addItem(t, c, m, { kind: 'ACTION', text: 'done', dueDate: '2030-02-01', completedAt: '2030-01-08T09:00:00Z' })
  ).id;
  ids.grace = (await addItem(t, c, g, { kind: 'ACTION', text: 'grace action', dueDate: '2030-02-15' })).id;
  await addItem(t, c, m, { kind: 'TALKING_POINT', text: 'not an action' });
  await addItem(t, c, m, { kind: 'DECISION', text: 'not an action either' });
});
afterAll(() => t.close());

const get = (q = '') => t.http().get(`/api/actions${q}`).set('Authorization', c.auth).expect(200);

describe('GET /api/actions', () => {
  it('lists actions by dueDate (none last) with meeting and person context', async () => {
    const res = await get();
    expect(res.body.hasMore).toBe(false);
    expect(res.body.actions.map((a: any) => a.id)).toEqual([ids.early, ids.done, ids.grace, ids.late, ids.none]);
    expect(res.body.actions[0]).toMatchObject({
      kind: 'ACTION',
      text: 'early',
      dueDate: '2030-01-10',
      meeting: {
        id: seriesAda.meetings[0].id,
        date: '2030-01-07',
        seriesId: seriesAda.series.id,
        title: '1:1 with Ada',
      },
      person: { id: ada.id, name: 'Ada Lovelace' },
    });
  });

  it('filters openOnly=1 to actions whose completedAt is null', async () => {
    const res = await get('?openOnly=1');
    expect(res.body.actions.map((a: any) => a.id)).not.toContain(ids.done);
    expect(res.body.actions).toHaveLength(4);
  });

  it('filters by inclusive dueAfter/dueBefore dates', async () => {
    const res = await get('?dueAfter=2030-01-10&dueBefore=2030-02-15');
    expect(res.body.actions.map((a: any) => a.id)).toEqual([ids.early, ids.done, ids.grace]);
  });

  it('filters by personId through the series participants', async () => {
    const res = await get(`?personId=${grace.id}`);
    expect(res.body.actions.map((a: any) => [a.id, a.person])).toEqual([[ids.grace, { id: grace.id, name: 'Grace' }]]);
    const nobody = await get('?personId=00000000-0000-4000-8000-000000000000');
    expect(nobody.body).toEqual({ actions: [], hasMore: false });
  });

  it('limits (default 100, max 200) and says hasMore', async () => {
    const res = await get('?limit=2');
    expect(res.body.actions).toHaveLength(2);
    expect(res.body.hasMore).toBe(true);
    await get('?limit=200');
    for (const q of ['limit=201', 'limit=0', 'openOnly=yes', 'dueAfter=2030-02-30', 'personId=bob']) {
      await t.http().get(`/api/actions?${q}`).set('Authorization', c.auth).expect(400);
    }
  });

  it('shows a talking point turned ACTION, leaves out carried ones and deleted meetings', async () => {
    const owner = await t.caller();
    const { meetings } = await createSeries(t, owner);
    const point = await addItem(t, owner, meetings[0].id, { text: 'becomes action' });
    await t
      .http()
      .patch(`/api/items/${point.id}`)
      .set('Authorization', owner.auth)
      .send({ kind: 'ACTION' })
      .expect(200);
    const gone = await addItem(t, owner, meetings[1].id, { kind: 'ACTION', text: 'meeting deleted' });
    await t.http().delete(`/api/meetings/${meetings[1].id}`).set('Authorization', owner.auth).expect(204);
    const res = await t.http().get('/api/actions').set('Authorization', owner.auth).expect(200);
    expect(res.body.actions.map((a: any) => a.id)).toEqual([point.id]);
    expect(res.body.actions.map((a: any) => a.id)).not.toContain(gone.id);
  });

  it('shows nothing of other accounts and needs meetings:read', async () => {
    const stranger = await t.caller();
    const res = await t.http().get('/api/actions').set('Authorization', stranger.auth).expect(200);
    expect(res.body).toEqual({ actions: [], hasMore: false });
    const writer = await t.caller(['meetings:write']);
    await t.http().get('/api/actions').set('Authorization', writer.auth).expect(403);
  });

  it('is served by the actions index, not a sequential scan', async () => {
    const plan = await t.db.transaction().execute(async (trx) => {
      // A handful of rows would make a scan cheapest; the benchmark's million rows would not.
      await sql`set local enable_seqscan = off`.execute(trx);
      const r = await sql<{ 'QUERY PLAN': string }>`
        explain select * from items where account_id = ${c.accountId} and kind = 'ACTION' and status = 'OPEN' and completed_at is null
        order by due_date asc nulls last, created_at, id limit 101`.execute(trx);
      return r.rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/items_open_actions_idx/);
    expect(plan).not.toMatch(/Seq Scan/);
  });
});
