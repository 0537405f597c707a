import { sql } from 'kysely';
import { addItem, createPerson, createSeries, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
let ada: any;
let grace: any;
const ids: Record<string, string> = {};
const LONG = `${'a'.repeat(100)} the Quarterly ROADMAP review ${'b'.repeat(100)}`;

beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
  const s1 = await createSeries(t, c);
  ada = s1.person;
  grace = await createPerson(t, c, 'Grace');
  const s2 = await createSeries(t, c, { title: '1:1 with Grace', participantIds: [grace.id], weekday: 2 });
  const [m1, m2] = s1.meetings;
  ids.m1 = m1.id;
  ids.m2 = m2.id;
  ids.g1 = s2.meetings[0].id;
  await t
    .http()
    .patch(`/api/meetings/${m1.id}`)
    .set('Authorization', c.auth)
    .send({ baseRevision: 1, sharedNotes: LONG })
    .expect(200);
  await t
    .http()
    .patch(`/api/meetings/${m2.id}`)
    .set('Authorization', c.auth)
    .send({ baseRevision: 1, sharedNotes: 'roadmap again' })
    .expect(200);
  ids.point = (await addItem(t, c, m1.id, { text: 'Roadmap questions' })).id;
  ids.action = (await addItem(t, c, m2.id, { kind: 'ACTION', text: 'Write the doc', notes: 'see roadmap' })).id;
  ids.doneAction = (
    await addItem(t, c, m1.id, { kind: 'ACTION', text: 'roadmap draft', completedAt: '2030-01-07T12:00:00Z' })
  ).id;
  ids.graceItem = (await addItem(t, c, s2.meetings[0].id, { kind: 'DECISION', text: 'Roadmap approved' })).id;
  await t
    .http()
    .put('/api/notes/2030-01-05')
    .set('Authorization', c.auth)
    .send({ yesterday: 'nothing', today: 'roadmap planning' })
    .expect(201);
  await t
    .http()
    .put('/api/notes/2030-01-06')
    .set('Authorization', c.auth)
    .send({ impediments: ['blocked on ROADMAP'] })
    .expect(201);
  await t
    .http()
    .put('/api/notes/2030-01-04')
    .set('Authorization', c.auth)
    .send({ today: 'price went up 100%' })
    .expect(201);
  await t
    .http()
    .put('/api/notes/2030-01-03')
    .set('Authorization', c.auth)
    .send({ today: 'price is 1000 and a_b' })
    .expect(201);
});
afterAll(() => t.close());

const search = (q: string) => t.http().get(`/api/search?${q}`).set('Authorization', c.auth);

describe('GET /api/search', () => {
  it('finds meetings, then items, then notes, newest first within each, case-insensitively', async () => {
    const res = await search('q=roadmap').expect(200);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.results.map((r: any) => [r.type, r.id])).toEqual([
      ['meeting', ids.m2],
      ['meeting', ids.m1],
      ['item', ids.action],
      ['item', ids.graceItem],
      ['item', ids.doneAction],
      ['item', ids.point],
      ['note', '2030-01-06'],
      ['note', '2030-01-05'],
    ]);
  });

  it('shapes meeting, item and note results as the spec says', async () => {
    const res = await search('q=roadmap').expect(200);
    const [meeting] = res.body.results;
    expect(meeting).toEqual({
      type: 'meeting',
      id: ids.m2,
      date: '2030-01-14',
      personName: 'Ada Lovelace',
      title: '1:1 with Ada',
      snippet: 'roadmap again',
      matchField: 'sharedNotes',
      meetingId: null,
      kind: null,
      status: null,
      completedAt: null,
      personId: null,
    });
    const item = res.body.results.find((r: any) => r.id === ids.action);
    expect(item).toEqual({
      type: 'item',
      id: ids.action,
      date: '2030-01-14',
      personName: 'Ada Lovelace',
      title: 'Write the doc',
      snippet: 'see roadmap',
      matchField: 'notes',
      meetingId: ids.m2,
      kind: 'ACTION',
      status: 'OPEN',
      completedAt: null,
      personId: ada.id,
    });
    const note = res.body.results.find((r: any) => r.id === '2030-01-06');
    expect(note).toEqual({
      type: 'note',
      id: '2030-01-06',
      date: '2030-01-06',
      personName: null,
      title: 'Daily note 2030-01-06',
      snippet: 'blocked on ROADMAP',
      matchField: 'impediments',
      meetingId: null,
      kind: null,
      status: null,
      completedAt: null,
      personId: null,
    });
  });

  it('cuts the snippet to about 40 characters either side of the match, with ellipses', async () => {
    const res = await search('q=quarterly&scope=meetings').expect(200);
    expect(res.body.results[0].snippet).toBe(
      `…${LONG.slice(LONG.indexOf('Quarterly') - 40, LONG.indexOf('Quarterly') + 'Quarterly'.length + 40)}…`,
    );
  });

  it('narrows by scope: notes, meetings (with non-action items), actions', async () => {
    const notes = await search('q=roadmap&scope=notes').expect(200);
    expect(notes.body.results.map((r: any) => r.type)).toEqual(['note', 'note']);
    const meetings = await search('q=roadmap&scope=meetings').expect(200);
    expect(meetings.body.results.map((r: any) => r.id)).toEqual([ids.m2, ids.m1, ids.graceItem, ids.point]);
    const actions = await search('q=roadmap&scope=actions').expect(200);
    expect(actions.body.results.map((r: any) => r.id)).toEqual([ids.action, ids.doneAction]);
    const open = await search('q=roadmap&scope=actions&openOnly=1').expect(200);
    expect(open.body.results.map((r: any) => r.id)).toEqual([ids.action]);
  });

  it('narrows by personId, leaving daily notes out', async () => {
    const res = await search(`q=roadmap&personId=${grace.id}`).expect(200);
    expect(res.body.results.map((r: any) => [r.id, r.personName, r.personId])).toEqual([
      [ids.graceItem, 'Grace', grace.id],
    ]);
  });

  it('narrows by inclusive from/to dates of meetings and notes', async () => {
    const res = await search('q=roadmap&from=2030-01-06&to=2030-01-08').expect(200);
    expect(res.body.results.map((r: any) => r.id)).toEqual([
      ids.m1,
      ids.graceItem,
      ids.doneAction,
      ids.point,
      '2030-01-06',
    ]);
  });

  it('applies limit to the union and reports hasMore', async () => {
    const res = await search('q=roadmap&limit=3').expect(200);
    expect(res.body.results.map((r: any) => r.id)).toEqual([ids.m2, ids.m1, ids.action]);
    expect(res.body.hasMore).toBe(true);
    const exact = await search('q=roadmap&limit=8').expect(200);
    expect(exact.body.hasMore).toBe(false);
  });

  it('matches % and _ literally', async () => {
    const pct = await search('q=100%25').expect(200);
    expect(pct.body.results.map((r: any) => r.id)).toEqual(['2030-01-04']);
    const under = await search('q=a_b').expect(200);
    expect(under.body.results.map((r: any) => r.id)).toEqual(['2030-01-03']);
  });

  it('validates q (1 to 200 characters), scope, dates and limit (max 100) with 400', async () => {
    for (const q of [
      '',
      'q=',
      `q=${'x'.repeat(201)}`,
      'q=x&scope=people',
      'q=x&limit=101',
      'q=x&from=2030-02-30',
      'q=x&personId=1',
      'q=%00',
    ]) {
      const res = await search(q);
      expect([q, res.status]).toEqual([q, 400]);
    }
    await search(`q=${'x'.repeat(200)}&limit=100`).expect(200);
  });

  it('finds nothing of other accounts', async () => {
    const stranger = await t.caller();
    const res = await t.http().get('/api/search?q=roadmap').set('Authorization', stranger.auth).expect(200);
    expect(res.body).toEqual({ results: [], hasMore: false });
  });

  it('uses the trigram indexes rather than scanning tables', async () => {
    const plans = await t.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const explain = async (query: ReturnType<typeof sql>) =>
        (await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(trx)).rows
          .map((r) => r['QUERY PLAN'])
          .join('\n');
      return [
        await explain(sql`select id from meetings where shared_notes ilike '%roadmap%'`),
        await explain(sql`select id from items where text ilike '%roadmap%' or notes ilike '%roadmap%'`),
        await explain(sql`select id from notes where search_text ilike '%roadmap%'`),
      ];
    });
    expect(plans[0]).toMatch(/meetings_shared_notes_trgm/);
    expect(plans[1]).toMatch(/items_text_trgm/);
    expect(plans[1]).toMatch(/items_notes_trgm/);
    expect(plans[2]).toMatch(/notes_search_trgm/);
  });
});
