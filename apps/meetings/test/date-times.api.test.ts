import { addItem, createSeries, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

// Every date-time input follows the one shared rule (@app/http-errors/validation): `Z` or an
// offset of at most +-14:00, years 0001 to 9999. Postgres refuses offsets past +-15:59 and the
// year 0, so anything looser reached it as a 500.
let t: TestApp;
let c: Caller;
let meetingId: string;
beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
  meetingId = (await createSeries(t, c)).meetings[0].id;
});
afterAll(() => t.close());

const OUT_OF_RANGE = [
  '2000-01-25T11:53:57+21:03',
  '2000-01-25T11:53:57-16:00',
  '2030-01-01T10:00:00+14:01',
  '0000-01-01T00:00:00Z',
];

describe('GET /api/notes?changedSince', () => {
  it('is 400 naming /changedSince for an offset past +-14:00 or the year 0', async () => {
    for (const since of OUT_OF_RANGE) {
      const res = await t
        .http()
        .get(`/api/notes?changedSince=${encodeURIComponent(since)}`)
        .set('Authorization', c.auth);
      expect({
        since,
        status: res.status,
        code: res.body.error?.code,
        paths: res.body.error?.details?.map((d: { path: string }) => d.path),
      }).toEqual({ since, status: 400, code: 'validation_failed', paths: ['/changedSince'] });
    }
  });

  it('accepts offsets of +14:00 and -14:00', async () => {
    for (const since of ['2000-01-25T11:53:57+14:00', '2000-01-25T11:53:57.5-14:00']) {
      await t
        .http()
        .get(`/api/notes?changedSince=${encodeURIComponent(since)}`)
        .set('Authorization', c.auth)
        .expect(200);
    }
  });
});

describe('POST /api/meetings/:id/items and PATCH /api/items/:id completedAt', () => {
  it('is 400 naming /completedAt for an offset past +-14:00 or the year 0', async () => {
    const item = await addItem(t, c, meetingId, { text: 'bounded' });
    for (const completedAt of OUT_OF_RANGE) {
      const created = await t
        .http()
        .post(`/api/meetings/${meetingId}/items`)
        .set('Authorization', c.auth)
        .send({ kind: 'ACTION', text: 'x', completedAt });
      const patched = await t.http().patch(`/api/items/${item.id}`).set('Authorization', c.auth).send({ completedAt });
      for (const res of [created, patched]) {
        // A nullable field's failure also names the `null` branch: every detail is at /completedAt.
        expect({
          completedAt,
          status: res.status,
          paths: [...new Set(res.body.error?.details?.map((d: { path: string }) => d.path))],
        }).toEqual({ completedAt, status: 400, paths: ['/completedAt'] });
      }
    }
  });

  it('accepts a +14:00 offset and stores the instant in UTC', async () => {
    const created = await t
      .http()
      .post(`/api/meetings/${meetingId}/items`)
      .set('Authorization', c.auth)
      .send({ kind: 'ACTION', text: 'x', completedAt: '2030-01-01T10:00:00+14:00' })
      .expect(201);
    expect(Date.parse(created.body.completedAt)).toBe(Date.parse('2029-12-31T20:00:00Z'));
  });
});
