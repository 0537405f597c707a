import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { createPool } from '@app/auth/runtime';
import { clusterSettledPast, pollUntil } from '@app/devstack';
import { encodeCursor, queryDigest } from '../src/domain/cursor.js';
import { createTask, daysFromNow, micros } from './helpers/factories.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

let t: TestApp;
beforeAll(async () => {
  // The concurrency tests send a few hundred requests a second from one account.
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(() => t.close());

interface Page {
  changes: Array<{ type: 'upsert' | 'delete'; id: string; item: Record<string, any> | null }>;
  nextCursor: string;
  hasMore: boolean;
}

async function changes(c: Caller, cursor?: string, limit?: number): Promise<Page> {
  const query: Record<string, string | number> = {};
  if (cursor !== undefined) query.cursor = cursor;
  if (limit !== undefined) query.limit = limit;
  return (await t.http().get('/api/v1/tasks/changes').query(query).set('Authorization', c.auth).expect(200)).body;
}

/** Follows nextCursor while hasMore; returns every change in order and the cursor to keep. */
async function syncAll(
  c: Caller,
  cursor?: string,
  limit?: number,
): Promise<{ changes: Page['changes']; cursor: string; pages: number }> {
  const all: Page['changes'] = [];
  let pages = 0;
  for (;;) {
    const page = await changes(c, cursor, limit);
    pages += 1;
    all.push(...page.changes);
    cursor = page.nextCursor;
    if (!page.hasMore) return { changes: all, cursor, pages };
    if (pages > 1000) throw new Error('the feed never ends');
  }
}

const byId = (list: Page['changes']) => new Map(list.map((ch) => [ch.id, ch]));

/**
 * Syncs from `cursor` until `done` holds for the changes gathered. The feed shows a change only
 * once every older transaction has ended, in the whole database cluster, which the test files
 * running beside this one share (their migrations run in transactions): a change can show a
 * moment after its commit, never before it.
 */
async function catchUp(
  c: Caller,
  cursor: string | undefined,
  done: (changes: Page['changes']) => boolean,
  limit?: number,
): Promise<{ changes: Page['changes']; cursor: string }> {
  const all: Page['changes'] = [];
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await syncAll(c, cursor, limit);
    all.push(...r.changes);
    cursor = r.cursor;
    if (done(all)) return { changes: all, cursor };
    if (Date.now() > deadline)
      throw new Error(`the feed did not catch up; it gave ${JSON.stringify(all.map((ch) => ch.id))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The feed's place of a task: the transaction that last wrote it. */
const stampOf = async (id: string) =>
  (await sql<{ xid: string }>`select change_xid::text as xid from tasks where id = ${id}`.execute(t.db)).rows[0]!.xid;

/** All these tasks have shown up. */
const seen =
  (...ids: string[]) =>
  (changes: Page['changes']) =>
    ids.every((id) => changes.some((ch) => ch.id === id));

describe('GET /api/v1/tasks/changes', () => {
  it('writes each task exactly as the task routes do, character for character', async () => {
    const c = await t.caller();
    const awkward = 'Quotes " and \\ backslash, a\nnewline, a\ttab, \u0001 control, \u2028 separator, é, 😀';
    const task = await createTask(t, c, {
      title: awkward,
      notes: `${awkward} </script>`,
      tags: ['"quoted"', 'back\\slash', 'ünï'],
      priority: 'high',
      dueAt: daysFromNow(3).replace(/\.\d+Z$/, '.120Z'),
      recurrence: 'every week',
      location: 'Room "4"',
      assigneeId: 'ann',
    });
    expect(task.dueAt).toMatch(/\.12Z$/);
    const done = await t.http().post(`/api/v1/tasks/${task.id}/complete`).set('Authorization', c.auth).expect(200);
    const got = await t.http().get(`/api/v1/tasks/${task.id}`).set('Authorization', c.auth).expect(200);
    const res = await catchUp(c, undefined, seen(task.id));
    const change = byId(res.changes).get(task.id)!;
    const { subtasks: _s, progress: _p, ...item } = got.body.item;
    expect(change).toEqual({ type: 'upsert', id: task.id, item });
    expect(change.item).toEqual(done.body.item);
    // The raw text, too: what JSON.stringify makes of the task the task routes answer with.
    const raw = await t.http().get('/api/v1/tasks/changes').set('Authorization', c.auth).expect(200);
    expect(raw.text).toContain(JSON.stringify({ type: 'upsert', id: task.id, item: done.body.item }));
  });

  it('starts a full sync with every live task of any level as an upsert, and leaves deleted ones out', async () => {
    const c = await t.caller();
    const a = await createTask(t, c, { title: 'A' });
    const b = await createTask(t, c, { title: 'B' });
    const sub = await createTask(t, c, { title: 'S', parentId: a.id });
    const gone = await createTask(t, c, { title: 'gone' });
    await t.http().delete(`/api/v1/tasks/${gone.id}`).set('Authorization', c.auth).expect(200);

    // A full sync once the feed is past every write above: one that began while a transaction older
    // than the delete was open (a parallel test file's) ends its first window below the delete, and
    // then hands out the delete, for a task the client never had.
    await clusterSettledPast(t.db, await stampOf(gone.id));
    const first = await syncAll(c);
    expect(first.changes.map((ch) => ch.type)).toEqual(['upsert', 'upsert', 'upsert']);
    expect(new Set(first.changes.map((ch) => ch.id))).toEqual(new Set([a.id, b.id, sub.id]));
    expect(byId(first.changes).get(sub.id)!.item).toEqual(sub);

    // Nothing changed since: an empty page, and a cursor to keep.
    const again = await changes(c, first.cursor);
    expect(again).toEqual({ changes: [], nextCursor: expect.any(String), hasMore: false });
  });

  it('pages a full sync by limit, each task exactly once', async () => {
    const c = await t.caller();
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await createTask(t, c, { title: `T${i}` })).id);
    // Else a window may end early, at a horizon an older transaction holds back.
    await clusterSettledPast(t.db, await stampOf(ids[4]));
    const pages = [await changes(c, undefined, 2)];
    while (pages[pages.length - 1]!.hasMore) pages.push(await changes(c, pages[pages.length - 1]!.nextCursor, 2));
    expect(pages.map((p) => p.changes.length)).toEqual([2, 2, 1]);
    expect(pages.flatMap((p) => p.changes.map((ch) => ch.id)).sort()).toEqual(ids.sort());
  });

  it('reports every kind of write once, in its latest state: edit, complete (and its next), reopen, move, delete', async () => {
    const c = await t.caller();
    const edited = await createTask(t, c, { title: 'edit me' });
    const recurring = await createTask(t, c, {
      title: 'water plants',
      recurrence: 'every monday',
      dueAt: daysFromNow(1),
    });
    const reopened = await createTask(t, c, { title: 'reopen me' });
    await t.http().post(`/api/v1/tasks/${reopened.id}/complete`).set('Authorization', c.auth).expect(200);
    const moved = await createTask(t, c, { title: 'move me' });
    const parent = await createTask(t, c, { title: 'delete me' });
    const child = await createTask(t, c, { title: 'child', parentId: parent.id });
    const untouched = await createTask(t, c, { title: 'untouched' });
    const { cursor } = await catchUp(
      c,
      undefined,
      seen(edited.id, recurring.id, reopened.id, moved.id, parent.id, child.id, untouched.id),
    );

    await t
      .http()
      .patch(`/api/v1/tasks/${edited.id}`)
      .set('Authorization', c.auth)
      .send({ title: 'first edit' })
      .expect(200);
    const lastEdit = (
      await t
        .http()
        .patch(`/api/v1/tasks/${edited.id}`)
        .set('Authorization', c.auth)
        .send({ title: 'second edit' })
        .expect(200)
    ).body.item;
    const completion = (
      await t.http().post(`/api/v1/tasks/${recurring.id}/complete`).set('Authorization', c.auth).expect(200)
    ).body;
    const reopen = (await t.http().post(`/api/v1/tasks/${reopened.id}/reopen`).set('Authorization', c.auth).expect(200))
      .body.item;
    const move = (
      await t
        .http()
        .put(`/api/v1/tasks/${moved.id}/position`)
        .set('Authorization', c.auth)
        .send({ afterId: null })
        .expect(200)
    ).body.item;
    await t
      .http()
      .patch(`/api/v1/tasks/${parent.id}`)
      .set('Authorization', c.auth)
      .send({ title: 'edited, then deleted' })
      .expect(200);
    await t.http().delete(`/api/v1/tasks/${parent.id}`).set('Authorization', c.auth).expect(200);

    const since = await catchUp(
      c,
      cursor,
      seen(edited.id, recurring.id, completion.next.id, reopened.id, moved.id, parent.id, child.id),
    );
    expect(since.changes.map((ch) => ch.id).sort()).toEqual(
      [edited.id, recurring.id, completion.next.id, reopened.id, moved.id, parent.id, child.id].sort(),
    );
    const got = byId(since.changes);
    expect(got.get(edited.id)).toEqual({ type: 'upsert', id: edited.id, item: lastEdit });
    expect(got.get(recurring.id)).toEqual({ type: 'upsert', id: recurring.id, item: completion.item });
    expect(got.get(completion.next.id)).toEqual({ type: 'upsert', id: completion.next.id, item: completion.next });
    expect(got.get(reopened.id)).toEqual({ type: 'upsert', id: reopened.id, item: reopen });
    expect(got.get(moved.id)).toEqual({ type: 'upsert', id: moved.id, item: move });
    expect(got.get(parent.id)).toEqual({ type: 'delete', id: parent.id, item: null });
    expect(got.get(child.id)).toEqual({ type: 'delete', id: child.id, item: null });
    expect(got.has(untouched.id)).toBe(false);
  });

  it('shows a task written again while a sync pages once more, in its newer state, and loses none', async () => {
    const c = await t.caller();
    const tasks = [];
    for (let i = 0; i < 6; i++) tasks.push(await createTask(t, c, { title: `P${i}` }));
    await catchUp(c, undefined, seen(...tasks.map((x) => x.id)));
    // A new full sync, two a page, that sees all six from its first page on. One read's horizon can
    // stand behind the last: a transaction of another database (another test file's) that ended
    // between the read's snapshot and its look at pg_stat_activity still counts there
    // (streams/window.ts), so the sync starts again until its first page is full.
    const page1 = await pollUntil(
      () => changes(c, undefined, 2),
      (page) => page.changes.length === 2,
      { timeoutMs: 60_000 },
    );
    expect(page1.changes).toHaveLength(2);
    const sent = page1.changes.map((ch) => ch.id);
    const notYet = tasks.map((x) => x.id).filter((id) => !sent.includes(id));
    // One task already sent and one not yet sent change between two pages of the same sync.
    const again = (
      await t
        .http()
        .patch(`/api/v1/tasks/${sent[0]}`)
        .set('Authorization', c.auth)
        .send({ title: 'sent, then edited' })
        .expect(200)
    ).body.item;
    const later = (
      await t
        .http()
        .patch(`/api/v1/tasks/${notYet[0]}`)
        .set('Authorization', c.auth)
        .send({ title: 'edited before it was sent' })
        .expect(200)
    ).body.item;
    const rest = await catchUp(
      c,
      page1.nextCursor,
      (list) => list.some((ch) => ch.item?.title === 'sent, then edited') && seen(notYet[0])(list),
      2,
    );
    const ids = rest.changes.map((ch) => ch.id);
    expect(ids.filter((id) => id === notYet[0])).toHaveLength(1);
    expect(byId(rest.changes).get(notYet[0])!.item).toEqual(later);
    expect(byId(rest.changes).get(sent[0]!)!.item).toEqual(again);
    expect(new Set([...sent, ...ids])).toEqual(new Set(tasks.map((x) => x.id)));
  });

  it("keeps workspaces apart: another account's changes never appear, and its cursor is refused", async () => {
    const c = await t.caller();
    const other = await t.caller();
    const mine = await createTask(t, c, { title: 'mine' });
    const start = await catchUp(c, undefined, seen(mine.id));
    const otherStart = await syncAll(other);
    const theirs = await createTask(t, other, { title: 'theirs' });
    await t
      .http()
      .patch(`/api/v1/tasks/${mine.id}`)
      .set('Authorization', c.auth)
      .send({ title: 'still mine' })
      .expect(200);
    expect((await catchUp(c, start.cursor, seen(mine.id))).changes.map((ch) => ch.id)).toEqual([mine.id]);
    expect((await catchUp(other, undefined, seen(theirs.id))).changes.map((ch) => ch.item!.title)).toEqual(['theirs']);

    const res = await t
      .http()
      .get('/api/v1/tasks/changes')
      .query({ cursor: otherStart.cursor })
      .set('Authorization', c.auth)
      .expect(400);
    expect(res.body.error.code).toBe('invalid_cursor');
  });

  describe('errors', () => {
    let c: Caller;
    beforeAll(async () => {
      c = await t.caller();
      const x = await createTask(t, c, { title: 'x' });
      const y = await createTask(t, c, { title: 'y' });
      await catchUp(c, undefined, seen(x.id, y.id));
    });
    const get = (query: Record<string, unknown>, auth = c.auth) =>
      t.http().get('/api/v1/tasks/changes').query(query).set('Authorization', auth);

    it.each(['garbage', 'a.b', `${Buffer.from('{"k":"changes"}').toString('base64url')}.x`])(
      'refuses a malformed cursor "%s" with 400 invalid_cursor',
      async (cursor) => {
        const res = await get({ cursor }).expect(400);
        expect(res.body.error).toMatchObject({ code: 'invalid_cursor', details: [{ path: 'cursor' }] });
      },
    );

    it('refuses an altered cursor with 400 invalid_cursor', async () => {
      const { nextCursor } = await changes(c);
      const [payload, sum] = nextCursor.split('.');
      const value = JSON.parse(Buffer.from(payload!, 'base64url').toString());
      const forged = `${Buffer.from(JSON.stringify({ ...value, x: '1' })).toString('base64url')}.${sum}`;
      expect((await get({ cursor: forged }).expect(400)).body.error.code).toBe('invalid_cursor');
    });

    it('refuses a cursor re-encoded with another position and its checksum recomputed (400 invalid_cursor): cursors are signed', async () => {
      const { nextCursor } = await changes(c);
      const value = JSON.parse(Buffer.from(nextCursor.split('.')[0]!, 'base64url').toString());
      const payload = Buffer.from(JSON.stringify({ ...value, x: '1', lo: '1' })).toString('base64url');
      const unkeyed = createHash('sha256').update(`tasks-cursor-v1.${payload}`).digest('base64url').slice(0, 16);
      expect((await get({ cursor: `${payload}.${unkeyed}` }).expect(400)).body.error.code).toBe('invalid_cursor');
      const flipped = `${nextCursor.slice(0, 5)}${nextCursor[5] === 'A' ? 'B' : 'A'}${nextCursor.slice(6)}`;
      expect((await get({ cursor: flipped }).expect(400)).body.error.code).toBe('invalid_cursor');
    });

    it('refuses a list or a search cursor with 400 validation_failed, and a feed cursor on a list', async () => {
      const list = (await t.http().get('/api/v1/tasks').query({ limit: 1 }).set('Authorization', c.auth).expect(200))
        .body.nextCursor;
      expect((await get({ cursor: list }).expect(400)).body.error).toMatchObject({
        code: 'validation_failed',
        details: [{ path: 'cursor' }],
      });
      await createTask(t, c, { title: 'x again' });
      const search = (
        await t.http().get('/api/v1/tasks').query({ q: 'x', limit: 1 }).set('Authorization', c.auth).expect(200)
      ).body.nextCursor;
      expect((await get({ cursor: search }).expect(400)).body.error.code).toBe('validation_failed');

      const feed = (await changes(c)).nextCursor;
      const res = await t.http().get('/api/v1/tasks').query({ cursor: feed }).set('Authorization', c.auth).expect(400);
      expect(res.body.error.code).toBe('validation_failed');
    });

    it('answers a cursor older than 30 days with 410 cursor_expired, and one just younger normally', async () => {
      const { nextCursor } = await changes(c);
      const value = JSON.parse(Buffer.from(nextCursor.split('.')[0]!, 'base64url').toString());
      const now = Math.floor(Date.now() / 1000);
      const old = encodeCursor({ ...value, t: now - 31 * 86_400 });
      expect((await get({ cursor: old }).expect(410)).body.error.code).toBe('cursor_expired');
      await get({ cursor: encodeCursor({ ...value, t: now - 29 * 86_400 }) }).expect(200);
      expect(value.w).toBe(queryDigest(c.workspaceId));
    });

    it.each([['0'], ['501'], ['-1'], ['1.5'], ['many']])(
      'refuses limit=%s with 400 validation_failed',
      async (limit) => {
        const res = await get({ limit }).expect(400);
        expect(res.body.error).toMatchObject({ code: 'validation_failed', details: [{ path: '/limit' }] });
      },
    );

    it('accepts limit 1 and 500', async () => {
      expect((await get({ limit: 1 }).expect(200)).body).toMatchObject({ hasMore: true });
      expect((await get({ limit: 500 }).expect(200)).body).toMatchObject({ hasMore: false });
    });

    it('needs a key with tasks:read (401 without one, 403 without the scope)', async () => {
      await t.http().get('/api/v1/tasks/changes').expect(401);
      const writer = await t.caller(['tasks:write']);
      expect((await get({}, writer.auth).expect(403)).body.error.code).toBe('insufficient_scope');
    });
  });
});

describe('tombstones', () => {
  it('are kept 31 days and pruned, a bounded batch at a time, when the workspace deletes a task', async () => {
    const c = await t.caller();
    const ages = [40, 32, 20];
    const ids: string[] = [];
    for (const days of ages) {
      const task = await createTask(t, c, { title: `deleted ${days} days ago` });
      await t.db
        .updateTable('tasks')
        .set({ deleted_at: sql<string>`now() - make_interval(days => ${days})` } as never)
        .where('id', '=', task.id)
        .execute();
      ids.push(task.id);
    }
    const other = await t.caller();
    const foreign = await createTask(t, other, { title: 'another workspace, long deleted' });
    await t.db
      .updateTable('tasks')
      .set({ deleted_at: sql<string>`now() - interval '40 days'` } as never)
      .where('id', '=', foreign.id)
      .execute();

    // A long-deleted parent that still has a live subtask stays (the cascade would take the subtask).
    const parent = await createTask(t, c, { title: 'deleted parent' });
    const orphan = await createTask(t, c, { title: 'live subtask', parentId: parent.id });
    await t.db
      .updateTable('tasks')
      .set({ deleted_at: sql<string>`now() - interval '40 days'` } as never)
      .where('id', '=', parent.id)
      .execute();

    const victim = await createTask(t, c, { title: 'delete me now' });
    await t.http().delete(`/api/v1/tasks/${victim.id}`).set('Authorization', c.auth).expect(200);
    const left = await t.db
      .selectFrom('tasks')
      .select('id')
      .where('id', 'in', [...ids, victim.id, foreign.id, parent.id, orphan.id])
      .execute();
    expect(left.map((r) => r.id).sort()).toEqual([ids[2]!, victim.id, foreign.id, parent.id, orphan.id].sort());
  });
});

describe('the feed under concurrency', () => {
  let pool: ReturnType<typeof createPool>;
  beforeAll(() => {
    pool = createPool(t.databaseUrl, 'tasks', 4);
  });
  afterAll(() => pool.end());

  it('never misses a change that commits after a later one (where a timestamp feed would), and never shows it before', async () => {
    const c = await t.caller();
    const slow = await createTask(t, c, { title: 'slow' });
    const fast = await createTask(t, c, { title: 'fast' });
    const { cursor } = await catchUp(c, undefined, seen(slow.id, fast.id));
    const before = (
      await t.db
        .selectFrom('tasks')
        .select(sql<string>`max(updated_at)`.as('m'))
        .where('workspace_id', '=', c.workspaceId)
        .executeTakeFirstOrThrow()
    ).m;

    // A writer begins first and commits last: it stamps its row as the service does, then waits.
    const held = await pool.connect();
    try {
      await held.query('begin');
      await held.query(
        `update tasks set title = 'slow, committed late', updated_at = greatest(clock_timestamp(), updated_at + interval '1 microsecond'), change_xid = pg_current_xact_id() where id = $1`,
        [slow.id],
      );
      const fastItem = (
        await t
          .http()
          .patch(`/api/v1/tasks/${fast.id}`)
          .set('Authorization', c.auth)
          .send({ title: 'fast, committed first' })
          .expect(200)
      ).body.item;

      // A naive feed by time reads "fast" now and moves its cursor past it...
      const naive1 = await t.db
        .selectFrom('tasks')
        .select(['id', 'updated_at'])
        .where('workspace_id', '=', c.workspaceId)
        .where('updated_at', '>', before)
        .execute();
      expect(naive1.map((r) => r.id)).toEqual([fast.id]);
      const naiveCursor = naive1[0]!.updated_at;
      // ...while this feed holds back everything from the oldest running transaction on.
      const during = await syncAll(c, cursor);
      expect(during.changes).toEqual([]);

      await held.query('commit');
      const naive2 = await t.db
        .selectFrom('tasks')
        .select('id')
        .where('workspace_id', '=', c.workspaceId)
        .where('updated_at', '>', naiveCursor)
        .execute();
      expect(naive2).toEqual([]); // the late commit is stamped before the naive cursor: lost to it

      const after = await catchUp(c, during.cursor, seen(slow.id, fast.id));
      const got = byId(after.changes);
      expect(got.get(slow.id)!.item!.title).toBe('slow, committed late');
      expect(got.get(fast.id)!.item).toEqual(fastItem);
    } finally {
      held.release();
    }
  });

  it('is not held back by a write transaction left open in another database of the server', async () => {
    const c = await t.caller();
    const { cursor } = await syncAll(c);
    // Another database on the same server (another service, a restore, a migration) with a write open,
    // followed by a write here that commits: transaction ids are server-wide, the feed's horizon is not.
    const otherName = `feed_other_${Date.now()}`;
    await sql.raw(`create database ${otherName}`).execute(t.db);
    const other = createPool(t.databaseUrl.replace(/\/[^/?]+(\?|$)/, `/${otherName}$1`), 'public', 1);
    const held = await other.connect();
    try {
      await held.query('begin');
      await held.query('create table held_open (x int)');
      const task = await createTask(t, c, { title: 'not held back by another database' });
      // Read until the task shows (the other write stays open all along: were the feed held back
      // by it, this would run out of time), not just once: a parallel test file's transaction that
      // ends between a page's snapshot and its read of pg_stat_activity holds back that one page.
      const after = await catchUp(c, cursor, seen(task.id));
      expect(after.changes.map((ch) => ch.id)).toEqual([task.id]);
    } finally {
      await held.query('rollback');
      held.release();
      await other.end();
      await sql.raw(`drop database ${otherName}`).execute(t.db);
    }
  });

  it('holds back a completion the service itself commits late (blocked on the order lock) until it commits', async () => {
    const c = await t.caller();
    const recurring = await createTask(t, c, {
      title: 'weekly report',
      recurrence: 'every friday',
      dueAt: daysFromNow(2),
    });
    const other = await createTask(t, c, { title: 'other' });
    const { cursor } = await catchUp(c, undefined, seen(recurring.id, other.id));

    const lock = await pool.connect();
    try {
      await lock.query('begin');
      await lock.query('select id from workspaces where id = $1 for no key update', [c.workspaceId]);
      // The completion stamps the task, then waits for the order lock to place `next`.
      const completing = t
        .http()
        .post(`/api/v1/tasks/${recurring.id}/complete`)
        .set('Authorization', c.auth)
        .then((r) => r);
      const waiting = async () =>
        (
          await pool.query(
            `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
          )
        ).rows[0].n as number;
      // The completion waits for the order lock.
      expect(await pollUntil(waiting, (n) => n > 0, { timeoutMs: 10_000, everyMs: 20 })).toBeGreaterThan(0);
      const edit = (
        await t
          .http()
          .patch(`/api/v1/tasks/${other.id}`)
          .set('Authorization', c.auth)
          .send({ title: 'edited meanwhile' })
          .expect(200)
      ).body.item;
      const during = await syncAll(c, cursor);
      expect(during.changes.find((ch) => ch.id === recurring.id)).toBeUndefined();

      await lock.query('commit');
      const completion = (await completing).body;
      expect(completion.next).not.toBeNull();
      const got = byId((await catchUp(c, during.cursor, seen(recurring.id, completion.next.id, other.id))).changes);
      expect(got.get(recurring.id)!.item).toEqual(completion.item);
      expect(got.get(completion.next.id)!.item).toEqual(completion.next);
      expect(micros(completion.item.updatedAt)).toBeLessThan(micros(edit.updatedAt));
      expect(got.get(other.id)!.item).toEqual(edit);
    } finally {
      lock.release();
    }
  });

  it('rebuilds exactly the list while writers commit in parallel and out of order', async () => {
    const c = await t.caller();
    const seed: Array<Record<string, any>> = [];
    for (let i = 0; i < 8; i++)
      seed.push(
        await createTask(t, c, {
          title: `seed ${i}`,
          ...(i % 3 === 0 ? { recurrence: 'every day', dueAt: daysFromNow(1) } : {}),
        }),
      );

    const state = new Map<string, Record<string, any>>();
    const apply = (list: Page['changes']) => {
      for (const ch of list) {
        const had = state.get(ch.id);
        if (ch.type === 'delete') state.delete(ch.id);
        else {
          // A task never comes back in an older state than one already seen.
          if (had) expect(micros(ch.item!.updatedAt)).toBeGreaterThanOrEqual(micros(had.updatedAt));
          state.set(ch.id, ch.item!);
        }
      }
    };
    let cursor: string | undefined;
    let writing = true;
    const reader = (async () => {
      for (let i = 0; writing && i < 5000; i++) {
        const page = await changes(c, cursor, 7);
        apply(page.changes);
        cursor = page.nextCursor;
        if (!page.hasMore) await new Promise((r) => setTimeout(r, 5));
      }
    })();

    const auth = c.auth;
    const live = seed.map((x) => x.id);
    const pick = () => live[Math.floor(Math.random() * live.length)]!;
    const writer = async (w: number) => {
      for (let i = 0; i < 25; i++) {
        const op = (w + i) % 6;
        const id = pick();
        if (op === 0)
          live.push((await createTask(t, c, { title: `w${w} ${i}`, ...(i % 2 ? { parentId: seed[1]!.id } : {}) })).id);
        else if (op === 1)
          await t
            .http()
            .patch(`/api/v1/tasks/${id}`)
            .set('Authorization', auth)
            .send({ title: `w${w} edit ${i}`, tags: [`t${i}`] });
        else if (op === 2) {
          const res = await t.http().post(`/api/v1/tasks/${id}/complete`).set('Authorization', auth);
          if (res.status === 200 && res.body.next) live.push(res.body.next.id);
        } else if (op === 3) await t.http().post(`/api/v1/tasks/${id}/reopen`).set('Authorization', auth);
        else if (op === 4)
          await t.http().put(`/api/v1/tasks/${id}/position`).set('Authorization', auth).send({ afterId: pick() });
        else if (i % 4 === 0 && id !== seed[1]!.id)
          await t.http().delete(`/api/v1/tasks/${id}`).set('Authorization', auth);
      }
    };
    // Transactions that start before the HTTP writers and commit after them.
    const lateCommitter = async () => {
      for (let i = 0; i < 4; i++) {
        const client = await pool.connect();
        try {
          await client.query('begin');
          await client.query(
            `update tasks set notes = $2, updated_at = greatest(clock_timestamp(), updated_at + interval '1 microsecond'), change_xid = pg_current_xact_id() where id = $1 and deleted_at is null`,
            [seed[i]!.id, `late ${i}`],
          );
          await client.query('select pg_sleep(0.3)');
          await client.query('commit');
        } finally {
          client.release();
        }
      }
    };
    await Promise.all([writer(0), writer(1), writer(2), writer(3), lateCommitter()]);
    writing = false;
    await reader;

    const listed = new Map<string, Record<string, any>>();
    let listCursor: string | null = null;
    do {
      const res: { body: { items: Array<Record<string, any>>; nextCursor: string | null } } = await t
        .http()
        .get('/api/v1/tasks')
        .query({ view: 'all', limit: 200, ...(listCursor ? { cursor: listCursor } : {}) })
        .set('Authorization', auth)
        .expect(200);
      for (const { subtasks, progress: _, ...item } of res.body.items) {
        listed.set(item.id, item);
        for (const s of subtasks) listed.set(s.id, s);
      }
      listCursor = res.body.nextCursor;
    } while (listCursor);

    // Catch up: the feed shows the last writes once every older transaction in the cluster has
    // ended (other test files share the server; their migrations run in transactions).
    const deadline = Date.now() + 60_000;
    for (;;) {
      const rest = await syncAll(c, cursor, 50);
      apply(rest.changes);
      cursor = rest.cursor;
      if (
        state.size === listed.size &&
        [...listed].every(([id, item]) => JSON.stringify(state.get(id)) === JSON.stringify(item))
      )
        break;
      if (Date.now() > deadline) {
        expect(Object.fromEntries(state)).toEqual(Object.fromEntries(listed));
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(listed.size).toBeGreaterThan(8);
    expect([...listed.values()].some((x) => x.notes?.startsWith('late'))).toBe(true);
  }, 120_000);
});
