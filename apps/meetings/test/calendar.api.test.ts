import ICAL from 'ical.js';
import { addItem, createSeries, sessionOf, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
});
afterAll(() => t.close());

const DAY = 86_400_000;
const isoDate = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY).toISOString().slice(0, 10);
const newFeed = async (auth = c.auth) =>
  (await t.http().post('/api/me/calendar-feed').set('Authorization', auth).expect(201)).body.url as string;
const pathOf = (url: string) => new URL(url).pathname;
const events = (text: string) => new ICAL.Component(ICAL.parse(text)).getAllSubcomponents('vevent');

describe('POST /api/me/calendar-feed', () => {
  it('answers a secret address of 32 random bytes (base64url), stored only as its hash', async () => {
    const url = await newFeed();
    expect(url).toMatch(/^http:\/\/[^/]+\/api\/calendar\/[A-Za-z0-9_-]{43}\.ics$/);
    const token = pathOf(url).slice('/api/calendar/'.length, -4);
    const rows = await t.db.selectFrom('calendar_feeds').selectAll().where('account_id', '=', c.accountId).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).not.toContain(token);
    expect(rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('takes a session or a key with meetings:read; a key without it is 403', async () => {
    const cookie = await sessionOf(t, c);
    await t.http().post('/api/me/calendar-feed').set('Cookie', cookie).expect(201);
    const reader = await t.caller(['meetings:read']);
    await newFeed(reader.auth);
    const writer = await t.caller(['meetings:write']);
    const res = await t.http().post('/api/me/calendar-feed').set('Authorization', writer.auth).expect(403);
    expect(res.body.error.code).toBe('insufficient_scope');
    await t.http().post('/api/me/calendar-feed').expect(401);
  });

  it('replaces the address on a second POST: the old one is 404', async () => {
    const first = await newFeed();
    const second = await newFeed();
    expect(second).not.toBe(first);
    const old = await t.http().get(pathOf(first)).expect(404);
    expect(old.body.error.code).toBe('not_found');
    await t.http().get(pathOf(second)).expect(200);
  });
});

describe('DELETE /api/me/calendar-feed', () => {
  it('removes the address (204): it is 404 from then on', async () => {
    const url = await newFeed();
    await t.http().delete('/api/me/calendar-feed').set('Authorization', c.auth).expect(204);
    expect(await t.db.selectFrom('calendar_feeds').selectAll().where('account_id', '=', c.accountId).execute()).toEqual(
      [],
    );
    const res = await t.http().get(pathOf(url)).expect(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('GET /api/calendar/<token>.ics', () => {
  it('needs no header and answers RFC 5545 that ical.js parses: one VEVENT per meeting of the window', async () => {
    const me = await t.caller();
    const { series, meetings } = await createSeries(t, me, {
      title: 'Weekly with Ada',
      startDate: isoDate(0),
      weekday: new Date().getUTCDay(),
      timezone: 'UTC',
    });
    await addItem(t, me, meetings[0].id, { text: 'Career goals' });
    await addItem(t, me, meetings[0].id, { text: 'Feedback' });
    await addItem(t, me, meetings[0].id, { kind: 'ACTION', text: 'Not a talking point' });
    await t.db
      .updateTable('meetings')
      .set({ private_notes: 'SECRET-PRIVATE' })
      .where('id', '=', meetings[0].id)
      .execute();
    const add = async (offset: number) =>
      (
        await t
          .http()
          .post('/api/meetings')
          .set('Authorization', me.auth)
          .send({ seriesId: series.id, date: isoDate(offset) })
          .expect(201)
      ).body;
    const past = await add(-29);
    await add(-32);
    await add(183);
    const url = await newFeed(me.auth);
    const res = await t.http().get(pathOf(url)).expect(200);
    expect(res.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(res.text).not.toContain('SECRET-PRIVATE');
    const vevents = events(res.text);
    const byUid = new Map(vevents.map((e) => [e.getFirstPropertyValue('uid'), e]));
    expect([...byUid.keys()].sort()).toEqual(
      [meetings[0].id, meetings[1].id, past.id].map((id) => `${id}@meetings.invalid`).sort(),
    );
    const first = byUid.get(`${meetings[0].id}@meetings.invalid`)!;
    expect(first.getFirstPropertyValue('summary')).toBe('Weekly with Ada');
    expect(first.getFirstPropertyValue('description')).toBe('- Career goals\n- Feedback');
    expect(first.getFirstPropertyValue('url')).toBe(`${new URL(url).origin}/api/meetings/${meetings[0].id}`);
    const start = first.getFirstPropertyValue('dtstart') as ICAL.Time;
    expect(start.zone).toBe(ICAL.Timezone.utcTimezone);
    expect(start.toJSDate().toISOString()).toBe(new Date(meetings[0].startsAt).toISOString());
    expect(res.text).toMatch(/DTSTART:\d{8}T\d{6}Z\r\n/);
  });

  it('keeps the same UIDs across two GETs, sends an ETag and answers 304 to If-None-Match', async () => {
    const me = await t.caller();
    await createSeries(t, me, { startDate: isoDate(1), weekday: new Date(Date.now() + DAY).getUTCDay() });
    const path = pathOf(await newFeed(me.auth));
    const one = await t.http().get(path).expect(200);
    const two = await t.http().get(path).expect(200);
    const uids = (text: string) => events(text).map((e) => e.getFirstPropertyValue('uid'));
    expect(uids(one.text)).toHaveLength(2);
    expect(uids(two.text)).toEqual(uids(one.text));
    expect(one.headers.etag).toMatch(/^"[^"]+"$/);
    expect(two.headers.etag).toBe(one.headers.etag);
    const cached = await t.http().get(path).set('If-None-Match', one.headers.etag!).expect(304);
    expect(cached.text ?? '').toBe('');
    await t.http().get(path).set('If-None-Match', '"other"').expect(200);
  });

  it('answers 404 in the error envelope for an unknown token or a malformed address', async () => {
    for (const path of [`/api/calendar/${'A'.repeat(43)}.ics`, '/api/calendar/short.ics']) {
      const res = await t.http().get(path).expect(404);
      expect(res.body.error).toMatchObject({ code: 'not_found' });
    }
  });
});
