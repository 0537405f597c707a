import { clusterSettledPast } from '@app/devstack';
import { sql } from 'kysely';
import { startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

// DESIGN.md "Hardening", cost per request: a page of items is at most 8 MiB of JSON (fewer items
// and hasMore / a cursor beyond that), whatever the stored data.

jest.setTimeout(120_000);

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(() => t.close());

const MiB = 1024 * 1024;
const COUNT = 40;
const sizeOf = (res: { text: string }) => Buffer.byteLength(res.text);

let c: Caller;
/** The seeded notes' dates, oldest first. */
let dates: string[];

/**
 * COUNT daily notes at their bounds in 3-byte characters (50,000 characters each of yesterday and
 * today, 50 impediments of 2,000: about 900 KB of JSON each, 36 MB in all), inserted in one
 * statement; waits until the changes feed can see them.
 */
beforeAll(async () => {
  c = await t.caller();
  const { rows } = await sql<{ date: string; change_xid: string }>`
    insert into notes (account_id, date, yesterday, today, impediments, today_priority, search_text, revision)
    select ${c.accountId}::uuid, date '2020-01-01' + n, repeat('€', 50000), repeat('€', 50000),
      array_fill(repeat('€', 2000), array[50]), '', '', 1
    from generate_series(1, ${COUNT}) n
    order by n
    returning to_char(date, 'YYYY-MM-DD') as date, change_xid::text`.execute(t.db);
  dates = rows.map((r) => r.date).sort();
  await clusterSettledPast(t.db, rows[0]!.change_xid);
});

describe('a page of meetings data', () => {
  it('of the changes feed is at most 8 MiB of JSON: fewer changes and hasMore, and nextCursor gets the rest exactly once', async () => {
    const first = await t.http().get('/api/changes?limit=500').set('Authorization', c.auth).expect(200);
    expect(sizeOf(first)).toBeLessThanOrEqual(8 * MiB);
    expect(first.body.changes.length).toBeGreaterThan(0);
    expect(first.body.changes.length).toBeLessThan(COUNT);
    expect(first.body.hasMore).toBe(true);
    const seen: string[] = first.body.changes.map((ch: any) => ch.id);
    let { nextCursor, hasMore } = first.body;
    while (hasMore) {
      const next = await t
        .http()
        .get('/api/changes')
        .query({ limit: 500, cursor: nextCursor })
        .set('Authorization', c.auth)
        .expect(200);
      expect(sizeOf(next)).toBeLessThanOrEqual(8 * MiB);
      seen.push(...next.body.changes.map((ch: any) => ch.id));
      ({ nextCursor, hasMore } = next.body);
    }
    expect([...seen].sort()).toEqual(dates);
  });

  it.each([
    ['by date', {}, [...Array(COUNT).keys()].reverse()],
    ['changed since', { changedSince: '2000-01-01T00:00:00Z' }, null],
  ])(
    'of the notes list (%s) is at most 8 MiB of JSON: fewer notes and a nextCursor, and paging on gets the rest exactly once',
    async (_name, query, order) => {
      const first = await t
        .http()
        .get('/api/notes')
        .query({ ...query, limit: 500 })
        .set('Authorization', c.auth)
        .expect(200);
      expect(sizeOf(first)).toBeLessThanOrEqual(8 * MiB);
      expect(first.body.items.length).toBeGreaterThan(0);
      expect(first.body.items.length).toBeLessThan(COUNT);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const seen: string[] = first.body.items.map((n: any) => n.date);
      let { nextCursor } = first.body;
      while (nextCursor !== null) {
        const next = await t
          .http()
          .get('/api/notes')
          .query({ ...query, limit: 500, cursor: nextCursor })
          .set('Authorization', c.auth)
          .expect(200);
        expect(sizeOf(next)).toBeLessThanOrEqual(8 * MiB);
        seen.push(...next.body.items.map((n: any) => n.date));
        ({ nextCursor } = next.body);
      }
      expect(order === null ? [...seen].sort() : seen).toEqual(order === null ? dates : order.map((k) => dates[k]));
    },
  );
});
