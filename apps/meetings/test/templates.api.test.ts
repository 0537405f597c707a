import { addItem, createSeries, setStatus, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
});
afterAll(() => t.close());

const TEMPLATE = [
  { kind: 'TALKING_POINT', text: 'Wins since last time' },
  { kind: 'DECISION', text: 'What we settle today' },
  { kind: 'ACTION', text: 'Follow-ups' },
];

/** The top-level items of a meeting as `{ kind, text }`, in reading order. */
async function agenda(meetingId: string): Promise<{ kind: string; text: string }[]> {
  const res = await t.http().get(`/api/meetings/${meetingId}`).set('Authorization', c.auth).expect(200);
  return res.body.items.filter((i: any) => i.parentId === null).map((i: any) => ({ kind: i.kind, text: i.text }));
}

const patch = (id: string, body: object) => t.http().patch(`/api/series/${id}`).set('Authorization', c.auth).send(body);

describe('POST /api/series with a template', () => {
  it('returns the template on the series and starts both materialized meetings with its items, in order', async () => {
    const { series, meetings } = await createSeries(t, c, { template: TEMPLATE });
    expect(series.template).toEqual(TEMPLATE);
    for (const m of meetings) expect(await agenda(m.id)).toEqual(TEMPLATE);
    const row = await t.db
      .selectFrom('series')
      .select('template')
      .where('id', '=', series.id)
      .executeTakeFirstOrThrow();
    expect(row.template).toEqual(TEMPLATE);
    const items = (await t.http().get(`/api/meetings/${meetings[0].id}`).set('Authorization', c.auth)).body.items;
    expect(items[0]).toMatchObject({ status: 'OPEN', carryCount: 0, provenance: null, position: 0, notes: '' });
  });

  it('defaults to an empty template: the meetings start empty', async () => {
    const { series, meetings } = await createSeries(t, c);
    expect(series.template).toEqual([]);
    expect(await agenda(meetings[0].id)).toEqual([]);
  });

  it('takes 50 items of 2,000 characters and refuses more (400), a wrong kind, an empty text or an extra field', async () => {
    const fifty = Array.from({ length: 50 }, (_, i) => ({ kind: 'TALKING_POINT', text: `${i}`.padEnd(2000, 'x') }));
    const { series, meetings } = await createSeries(t, c, { template: fifty });
    expect(series.template).toHaveLength(50);
    expect((await agenda(meetings[1].id)).map((i) => i.text)).toEqual(fifty.map((i) => i.text));
    const bad = [
      [...fifty, { kind: 'TALKING_POINT', text: 'one more' }],
      [{ kind: 'TALKING_POINT', text: 'x'.repeat(2001) }],
      [{ kind: 'NOTE', text: 'x' }],
      [{ kind: 'ACTION', text: '' }],
      [{ kind: 'ACTION' }],
      [{ kind: 'ACTION', text: 'x', owner: 'Ada' }],
      'not a list',
    ];
    for (const template of bad) {
      const res = await patch(series.id, { template });
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
    }
    const created = await t.http().post('/api/series').set('Authorization', c.auth).send({
      title: 'Too long',
      cadence: 'WEEKLY',
      weekday: 1,
      startTime: '09:00',
      durationMinutes: 30,
      timezone: 'UTC',
      startDate: '2030-01-07',
      template: bad[0],
    });
    expect(created.status).toBe(400);
  });
});

describe('PATCH /api/series/:id template', () => {
  it('replaces the template: meetings that exist keep their items, each new one starts with the new template', async () => {
    const { series, meetings } = await createSeries(t, c, { template: TEMPLATE });
    const next = [{ kind: 'ACTION', text: 'Review the roadmap' }];
    const res = await patch(series.id, { template: next }).expect(200);
    expect(res.body.template).toEqual(next);
    expect(await agenda(meetings[0].id)).toEqual(TEMPLATE);
    const added = await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: series.id, date: '2030-03-04' })
      .expect(201);
    expect(await agenda(added.body.id)).toEqual(next);

    await patch(series.id, { template: [] }).expect(200);
    const plain = await t
      .http()
      .post('/api/meetings')
      .set('Authorization', c.auth)
      .send({ seriesId: series.id, date: '2030-03-11' })
      .expect(201);
    expect(await agenda(plain.body.id)).toEqual([]);
  });

  it('leaves the template alone when another field changes', async () => {
    const { series } = await createSeries(t, c, { template: TEMPLATE });
    const res = await patch(series.id, { title: 'Renamed' }).expect(200);
    expect(res.body.template).toEqual(TEMPLATE);
  });
});

describe('a new meeting materialized by a carry', () => {
  it('starts with the carried point, then the template items', async () => {
    const { series, meetings } = await createSeries(t, c, { template: TEMPLATE });
    await setStatus(t, c, meetings[1].id, 'SKIPPED');
    const source = await addItem(t, c, meetings[0].id, { text: 'Promotion' });
    const res = await t.http().post(`/api/items/${source.id}/carry`).set('Authorization', c.auth).send({}).expect(200);
    expect(res.body.meeting).toMatchObject({ seriesId: series.id, date: '2030-01-21' });
    expect(res.body.item.position).toBe(0);
    expect(await agenda(res.body.meeting.id)).toEqual([{ kind: 'TALKING_POINT', text: 'Promotion' }, ...TEMPLATE]);
  });

  it('into a meeting that exists already appends the point after its template items', async () => {
    const { meetings } = await createSeries(t, c, { template: TEMPLATE });
    const source = await addItem(t, c, meetings[0].id, { text: 'Promotion' });
    await t.http().post(`/api/items/${source.id}/carry`).set('Authorization', c.auth).send({}).expect(200);
    expect(await agenda(meetings[1].id)).toEqual([...TEMPLATE, { kind: 'TALKING_POINT', text: 'Promotion' }]);
  });
});
