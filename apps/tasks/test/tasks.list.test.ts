import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { TASK_FIELDS, createTask, daysFromNow } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(() => t.close());

const list = (c: Caller, query: string) => t.http().get(`/api/v1/tasks${query}`).set('Authorization', c.auth);
const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((i) => i.id);

/** Every page of a listing, following nextCursor. */
async function allPages(c: Caller, query: string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const sep: string = query.includes('?') ? '&' : '?';
    const res: { body: any } = await list(
      c,
      `${query}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`,
    ).expect(200);
    seen.push(...ids(res));
    cursor = res.body.nextCursor;
  } while (cursor);
  return seen;
}

describe('GET /api/v1/tasks (views)', () => {
  let c: Caller;
  const made: Record<string, any> = {};
  /** `ms` from now, but never past midnight UTC (the account's zone): "today" even when the suite runs at 23:55. */
  const laterToday = (ms: number) => {
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    return new Date(Math.min(now.getTime() + ms, midnight - 1)).toISOString();
  };
  beforeAll(async () => {
    c = await t.caller();
    made.first = await createTask(t, c, { title: 'first', tags: ['work'] });
    made.sub = await createTask(t, c, { title: 'sub of first', parentId: made.first.id, dueAt: laterToday(864_000) });
    made.upcoming = await createTask(t, c, { title: 'next week', dueAt: daysFromNow(7), tags: ['work'] });
    made.today = await createTask(t, c, { title: 'later today', dueAt: laterToday(86_400) });
    made.done = await createTask(t, c, { title: 'done', dueAt: laterToday(86_400) });
    await t.http().post(`/api/v1/tasks/${made.done.id}/complete`).set('Authorization', c.auth).expect(200);
    made.overdue = await createTask(t, c, { title: 'overdue', dueAt: daysFromNow(1) });
    await t.db
      .updateTable('tasks')
      .set({ due_at: daysFromNow(-3) })
      .where('id', '=', made.overdue.id)
      .execute();
    made.deleted = await createTask(t, c, { title: 'deleted', dueAt: laterToday(86_400) });
    await t.http().delete(`/api/v1/tasks/${made.deleted.id}`).set('Authorization', c.auth).expect(200);
  });

  it('lists view=all by default: live top-level tasks, open and completed, in manual order, with subtasks and progress', async () => {
    const res = await list(c, '').expect(200);
    expect(ids(res)).toEqual([made.first.id, made.upcoming.id, made.today.id, made.done.id, made.overdue.id]);
    expect(res.body.nextCursor).toBeNull();
    const first = res.body.items[0];
    expect(Object.keys(first).sort()).toEqual([...TASK_FIELDS, 'progress', 'subtasks'].sort());
    expect(first.subtasks.map((s: { id: string }) => s.id)).toEqual([made.sub.id]);
    expect(first.progress).toEqual({ completed: 0, total: 1, allComplete: false });
    expect(ids(await list(c, '?view=all').expect(200))).toEqual(ids(res));
  });

  it('gives each task of view=all its subtasks exactly as GET /tasks/:id does: live ones, by createdAt, every field', async () => {
    const parent = await createTask(t, c, { title: 'parent with three' });
    const a = await createTask(t, c, {
      title: 'a',
      parentId: parent.id,
      dueAt: daysFromNow(2),
      tags: ['x', 'y'],
      notes: 'n',
      priority: 'high',
      location: 'desk',
    });
    const b = await createTask(t, c, { title: 'b', parentId: parent.id });
    const gone = await createTask(t, c, { title: 'gone', parentId: parent.id });
    await t.http().post(`/api/v1/tasks/${b.id}/complete`).set('Authorization', c.auth).expect(200);
    await t.http().delete(`/api/v1/tasks/${gone.id}`).set('Authorization', c.auth).expect(200);
    const one = await t.http().get(`/api/v1/tasks/${parent.id}`).set('Authorization', c.auth).expect(200);
    const listed = (await list(c, '?view=all').expect(200)).body.items.find((i: { id: string }) => i.id === parent.id);
    expect(listed.subtasks.map((s: { id: string }) => s.id)).toEqual([a.id, b.id]);
    expect(listed.subtasks).toEqual(one.body.item.subtasks);
    expect(listed.subtasks[1].completedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(listed.progress).toEqual({ completed: 1, total: 2, allComplete: false });
    await t.http().delete(`/api/v1/tasks/${parent.id}`).set('Authorization', c.auth).expect(200);
  });

  it("lists view=today: open tasks of any level due before tomorrow in the caller's zone, overdue included, by createdAt", async () => {
    const res = await list(c, '?view=today').expect(200);
    expect(ids(res)).toEqual([made.sub.id, made.today.id, made.overdue.id]);
    for (const item of res.body.items) expect(Object.keys(item).sort()).toEqual(TASK_FIELDS);
  });

  it('lists view=upcoming: open tasks due from the start of tomorrow', async () => {
    expect(ids(await list(c, '?view=upcoming').expect(200))).toEqual([made.upcoming.id]);
  });

  it('lists view=completed: completed tasks by createdAt', async () => {
    expect(ids(await list(c, '?view=completed').expect(200))).toEqual([made.done.id]);
  });

  it('filters any view by tag', async () => {
    expect(ids(await list(c, '?tag=work').expect(200))).toEqual([made.first.id, made.upcoming.id]);
    expect(ids(await list(c, '?view=upcoming&tag=work').expect(200))).toEqual([made.upcoming.id]);
    expect(ids(await list(c, '?view=today&tag=work').expect(200))).toEqual([]);
    expect(ids(await list(c, '?tag=Work').expect(200))).toEqual([]);
  });

  it("never shows another workspace's tasks", async () => {
    const other = await t.caller();
    const theirs = await createTask(t, other, { title: 'theirs', dueAt: daysFromNow(0.001) });
    for (const view of ['all', 'today', 'upcoming', 'completed']) {
      expect(ids(await list(c, `?view=${view}`).expect(200))).not.toContain(theirs.id);
    }
    expect(ids(await list(other, '?view=today').expect(200))).toHaveLength(1);
    expect(ids(await list(c, '?view=all').expect(200))).toHaveLength(5);
  });

  it('draws the line between today and upcoming at midnight in X-Timezone', async () => {
    const z = await t.caller();
    // Due 30 minutes after the coming midnight in Tokyo: upcoming there, whatever the hour now.
    const tokyoMidnight = DateTime.now().setZone('Asia/Tokyo').startOf('day').plus({ days: 1 });
    const task = await createTask(t, z, { title: 'edge', dueAt: tokyoMidnight.plus({ minutes: 30 }).toUTC().toISO()! });
    expect(ids(await list(z, '?view=today').set('X-Timezone', 'Asia/Tokyo').expect(200))).toEqual([]);
    expect(ids(await list(z, '?view=upcoming').set('X-Timezone', 'Asia/Tokyo').expect(200))).toEqual([task.id]);
    // The same instant seen from Honolulu (19 hours behind) falls before or after its own midnight depending on the hour now.
    const honoluluTomorrow = DateTime.now().setZone('Pacific/Honolulu').startOf('day').plus({ days: 1 });
    const expectedToday = tokyoMidnight.plus({ minutes: 30 }) < honoluluTomorrow;
    expect(ids(await list(z, '?view=today').set('X-Timezone', 'Pacific/Honolulu').expect(200))).toEqual(
      expectedToday ? [task.id] : [],
    );
    const bad = await list(z, '?view=today').set('X-Timezone', 'Nowhere/City').expect(400);
    expect(bad.body.error).toMatchObject({ code: 'validation_failed', details: [{ path: 'X-Timezone' }] });
  });
});

describe('GET /api/v1/tasks (pagination and parameters)', () => {
  let c: Caller;
  let created: string[];
  beforeAll(async () => {
    c = await t.caller();
    created = [];
    for (let i = 0; i < 7; i += 1)
      created.push((await createTask(t, c, { title: `p${i}`, tags: ['page'], dueAt: daysFromNow(3) })).id);
  });

  it('pages view=all and view=upcoming with limit and nextCursor, without gaps or repeats', async () => {
    const first = await list(c, '?limit=3').expect(200);
    expect(first.body.items).toHaveLength(3);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    expect(await allPages(c, '?limit=3')).toEqual(created);
    expect(await allPages(c, '?view=upcoming&limit=2')).toEqual(created);
    expect(await allPages(c, '?view=upcoming&tag=page&limit=7')).toEqual(created);
    const exact = await list(c, '?limit=7').expect(200);
    expect(exact.body.nextCursor).toBeNull();
  });

  it('defaults to 50 items and accepts up to 200', async () => {
    const bulk = await t.caller();
    await t.db
      .insertInto('tasks')
      .values(
        Array.from({ length: 205 }, (_, i) => ({
          workspace_id: bulk.workspaceId,
          title: `bulk ${i}`,
          position: String(i + 1),
        })),
      )
      .execute();
    const def = await list(bulk, '').expect(200);
    expect(def.body.items).toHaveLength(50);
    const max = await list(bulk, '?limit=200').expect(200);
    expect(max.body.items).toHaveLength(200);
    expect(max.body.items[199].title).toBe('bulk 199');
    expect(await allPages(bulk, '?limit=200')).toHaveLength(205);
  });

  it.each([
    'limit=0',
    'limit=201',
    'limit=-1',
    'limit=abc',
    'limit=1.5',
    'limit=1e400',
    'limit=',
    'view=someday',
    'view=ALL',
    'tag=',
    `tag=${'t'.repeat(51)}`,
    'view=all&view=today',
  ])('answers 400 validation_failed for %s', async (query) => {
    const res = await list(c, `?${query}`).expect(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.length).toBeGreaterThan(0);
  });

  it('ignores unknown query parameters', async () => {
    expect(ids(await list(c, '?limit=2&colour=blue').expect(200))).toEqual(created.slice(0, 2));
  });

  it('answers 400 invalid_cursor for a malformed, altered or foreign-view cursor', async () => {
    const page = await list(c, '?limit=2').expect(200);
    const cursor: string = page.body.nextCursor;
    const [payload, sum] = cursor.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), p: '0' }),
    ).toString('base64url');
    for (const bad of [
      'garbage',
      `${forged}.${sum}`,
      `${payload}.AAAAAAAAAAAAAAAA`,
      cursor.slice(0, -1),
      `${cursor}.x`,
      '%00',
    ]) {
      const res = await list(c, `?limit=2&cursor=${encodeURIComponent(bad)}`).expect(400);
      expect(res.body.error.code).toBe('invalid_cursor');
    }
    for (const other of ['?view=upcoming&limit=2', '?tag=page&limit=2']) {
      const res = await list(c, `${other}&cursor=${encodeURIComponent(cursor)}`).expect(400);
      expect(res.body.error.code).toBe('invalid_cursor');
    }
  });

  it('answers 400 invalid_cursor for a cursor re-encoded with another position and its checksum recomputed: cursors are signed', async () => {
    const cursor: string = (await list(c, '?limit=2').expect(200)).body.nextCursor;
    const value = JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString());
    const payload = Buffer.from(JSON.stringify({ ...value, p: '0' })).toString('base64url');
    const unkeyed = createHash('sha256').update(`tasks-cursor-v1.${payload}`).digest('base64url').slice(0, 16);
    const res = await list(c, `?limit=2&cursor=${encodeURIComponent(`${payload}.${unkeyed}`)}`).expect(400);
    expect(res.body.error.code).toBe('invalid_cursor');
  });

  it('answers 400 validation_failed for a search cursor on a plain list', async () => {
    const search = await list(c, '?q=p0 or p1 or p2&limit=1').expect(200);
    expect(search.body.nextCursor).toEqual(expect.any(String));
    const res = await list(c, `?cursor=${encodeURIComponent(search.body.nextCursor)}`).expect(400);
    expect(res.body.error.code).toBe('validation_failed');
  });

  it('needs tasks:read (403) and authentication (401)', async () => {
    const writer = await t.caller(['tasks:write']);
    expect((await list(writer, '').expect(403)).body.error.code).toBe('insufficient_scope');
    await t.http().get('/api/v1/tasks').expect(401);
  });
});
