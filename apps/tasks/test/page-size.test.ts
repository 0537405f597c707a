import { sql } from 'kysely';
import { clusterSettledPast } from '@app/devstack';
import { daysFromNow } from './helpers/factories.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

// DESIGN.md "Hardening", cost per request: a page of items is at most 8 MiB of JSON (fewer items
// and hasMore / a cursor beyond that), whatever the stored data.

jest.setTimeout(120_000);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(() => t.close());

const MiB = 1024 * 1024;
const COUNT = 250;
const sizeOf = (res: { text: string }) => Buffer.byteLength(res.text);

let c: Caller;
/** The seeded tasks' ids in creation (and manual) order. */
let ids: string[];

/**
 * COUNT top-level tasks at their bounds in 3-byte characters (a 500-character title, 20,000
 * characters of notes: about 61 KB of JSON each, 15 MB in all), due in a week, inserted in one
 * statement; waits until the changes feed can see them.
 */
beforeAll(async () => {
  c = await t.caller();
  const { rows } = await sql<{ id: string; change_xid: string }>`
    insert into tasks (workspace_id, title, notes, tags, due_at, position)
    select ${c.workspaceId}::uuid, 'alpha ' || repeat('€', 494) || n, repeat('€€€ ', 5000), '{}'::text[],
      ${daysFromNow(7)}::timestamptz + make_interval(secs => n), nextval('tasks_position_seq')::numeric
    from generate_series(1, ${COUNT}) n
    order by n
    returning id, change_xid::text`.execute(t.db);
  const created = await t.db
    .selectFrom('tasks')
    .select('id')
    .where('workspace_id', '=', c.workspaceId)
    .orderBy('position')
    .execute();
  ids = created.map((r) => r.id);
  expect(ids).toHaveLength(COUNT);
  await clusterSettledPast(t.db, rows[0]!.change_xid);
});

describe('a page of tasks', () => {
  it('of the changes feed is at most 8 MiB of JSON: fewer changes and hasMore, and nextCursor gets the rest exactly once', async () => {
    const first = await t.http().get('/api/v1/tasks/changes?limit=500').set('Authorization', c.auth).expect(200);
    expect(sizeOf(first)).toBeLessThanOrEqual(8 * MiB);
    expect(first.body.changes.length).toBeGreaterThan(0);
    expect(first.body.changes.length).toBeLessThan(COUNT);
    expect(first.body.hasMore).toBe(true);
    const seen: string[] = first.body.changes.map((ch: any) => ch.id);
    let { nextCursor, hasMore } = first.body;
    while (hasMore) {
      const next = await t
        .http()
        .get('/api/v1/tasks/changes')
        .query({ limit: 500, cursor: nextCursor })
        .set('Authorization', c.auth)
        .expect(200);
      expect(sizeOf(next)).toBeLessThanOrEqual(8 * MiB);
      seen.push(...next.body.changes.map((ch: any) => ch.id));
      ({ nextCursor, hasMore } = next.body);
    }
    expect(seen).toHaveLength(COUNT);
    expect(new Set(seen)).toEqual(new Set(ids));
  });

  it.each([
    ['view=all', { view: 'all' }, (list: string[]) => list],
    ['view=upcoming', { view: 'upcoming' }, (list: string[]) => list],
    ['a search', { q: 'alpha' }, (list: string[]) => [...list].sort()],
  ])(
    'of the list (%s) is at most 8 MiB of JSON: fewer items and a nextCursor, and paging on gets the rest exactly once',
    async (_name, query, order) => {
      const first = await t
        .http()
        .get('/api/v1/tasks')
        .query({ ...query, limit: 200 })
        .set('Authorization', c.auth)
        .expect(200);
      expect(sizeOf(first)).toBeLessThanOrEqual(8 * MiB);
      expect(first.body.items.length).toBeGreaterThan(0);
      expect(first.body.items.length).toBeLessThan(200);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const seen: string[] = first.body.items.map((i: any) => i.id);
      let { nextCursor } = first.body;
      while (nextCursor !== null) {
        const next = await t
          .http()
          .get('/api/v1/tasks')
          .query({ ...query, limit: 200, cursor: nextCursor })
          .set('Authorization', c.auth)
          .expect(200);
        expect(sizeOf(next)).toBeLessThanOrEqual(8 * MiB);
        seen.push(...next.body.items.map((i: any) => i.id));
        ({ nextCursor } = next.body);
      }
      expect(order(seen)).toEqual(order(ids));
    },
  );
});
