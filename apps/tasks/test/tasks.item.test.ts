import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { TASK_FIELDS, createTask, daysFromNow, micros } from './helpers/factories.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  c = await t.caller();
});
afterAll(() => t.close());

const url = (id: string) => `/api/v1/tasks/${id}`;
const MISSING = '00000000-0000-4000-8000-000000000000';

describe('GET /api/v1/tasks/{id}', () => {
  it('returns the task with its live subtasks (14 fields each) and progress', async () => {
    const parent = await createTask(t, c, { title: 'parent' });
    const a = await createTask(t, c, { title: 'a', parentId: parent.id });
    const b = await createTask(t, c, { title: 'b', parentId: parent.id });
    const gone = await createTask(t, c, { title: 'gone', parentId: parent.id });
    await t
      .http()
      .post(`${url(a.id)}/complete`)
      .set('Authorization', c.auth)
      .expect(200);
    await t.http().delete(url(gone.id)).set('Authorization', c.auth).expect(200);
    const res = await t.http().get(url(parent.id)).set('Authorization', c.auth).expect(200);
    expect(res.headers.etag).toBe(`"${res.body.item.updatedAt}"`);
    expect(res.body.item.subtasks.map((s: { id: string }) => s.id)).toEqual([a.id, b.id]);
    for (const s of res.body.item.subtasks) expect(Object.keys(s).sort()).toEqual(TASK_FIELDS);
    expect(res.body.item.progress).toEqual({ completed: 1, total: 2, allComplete: false });
    await t
      .http()
      .post(`${url(b.id)}/complete`)
      .set('Authorization', c.auth)
      .expect(200);
    const done = await t.http().get(url(parent.id)).set('Authorization', c.auth).expect(200);
    expect(done.body.item.progress).toEqual({ completed: 2, total: 2, allComplete: true });
  });

  it('reports no subtasks as total 0 and allComplete false', async () => {
    const task = await createTask(t, c);
    const res = await t.http().get(url(task.id)).set('Authorization', c.auth).expect(200);
    expect(res.body.item).toMatchObject({ subtasks: [], progress: { completed: 0, total: 0, allComplete: false } });
  });

  it('answers 404 for a missing, deleted, foreign or non-UUID id', async () => {
    const other = await t.caller();
    const foreign = await createTask(t, other);
    const deleted = await createTask(t, c);
    await t.http().delete(url(deleted.id)).set('Authorization', c.auth).expect(200);
    for (const id of [MISSING, foreign.id, deleted.id, 'not-a-uuid', '123']) {
      const res = await t.http().get(url(id)).set('Authorization', c.auth).expect(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it('needs tasks:read (403) and authentication (401)', async () => {
    const task = await createTask(t, c);
    const writer = await t.caller(['tasks:write']);
    expect((await t.http().get(url(task.id)).set('Authorization', writer.auth).expect(403)).body.error.code).toBe(
      'insufficient_scope',
    );
    await t.http().get(url(task.id)).expect(401);
  });
});

describe('PATCH /api/v1/tasks/{id}', () => {
  const patch = (id: string, body: object) => t.http().patch(url(id)).set('Authorization', c.auth).send(body);

  it('changes only the fields sent, moves updatedAt forward and returns the new ETag', async () => {
    const task = await createTask(t, c, { title: 'before', notes: 'keep', tags: ['x'] });
    const res = await patch(task.id, { title: 'after', priority: 'low', location: null }).expect(200);
    expect(res.body.item).toMatchObject({
      title: 'after',
      notes: 'keep',
      tags: ['x'],
      priority: 'low',
      location: null,
      createdAt: task.createdAt,
    });
    expect(micros(res.body.item.updatedAt)).toBeGreaterThan(micros(task.updatedAt));
    expect(res.headers.etag).toBe(`"${res.body.item.updatedAt}"`);
    expect(Object.keys(res.body.item).sort()).toEqual(TASK_FIELDS);
  });

  it('stores each field of an edit in its own field, whichever fields an edit sends together', async () => {
    const task = await createTask(t, c, { title: 'start' });
    // An instant whose milliseconds end in a zero: the API writes it as Postgres prints it (.12Z).
    const due = '2030-05-06T07:08:09.120Z';
    const all = {
      title: 'every field',
      notes: 'new notes',
      priority: 'high',
      dueAt: due,
      tags: ['b', 'a', 'b'],
      recurrence: 'every week',
      location: 'Room 4',
    };
    const first = (await patch(task.id, all).expect(200)).body.item;
    const { dueAt: _dueAt, ...rest } = all;
    expect(first).toMatchObject({ ...rest, tags: ['b', 'a'] });
    expect(Date.parse(first.dueAt)).toBe(Date.parse(due));
    // The same fields in another order and with other values, then each field alone after its neighbours.
    const reordered = { location: 'Room 5', title: 'reordered', tags: [] };
    expect(
      (await patch(task.id, reordered).set('If-Match', `"${first.updatedAt}"`).expect(200)).body.item,
    ).toMatchObject({ ...reordered, notes: 'new notes', priority: 'high' });
    for (const [field, value] of Object.entries({ notes: null, priority: 'low', tags: ['solo'], location: null })) {
      const item = (await patch(task.id, { [field]: value }).expect(200)).body.item;
      expect(item[field]).toEqual(value);
      expect(item.title).toBe('reordered');
    }
    expect((await t.http().get(url(task.id)).set('Authorization', c.auth).expect(200)).body.item).toMatchObject({
      title: 'reordered',
      notes: null,
      priority: 'low',
      tags: ['solo'],
      recurrence: 'every week',
      location: null,
    });
  });

  it('treats an empty body as no change', async () => {
    const task = await createTask(t, c);
    const res = await patch(task.id, {}).expect(200);
    expect(res.body.item).toEqual(task);
  });

  it('moves updatedAt strictly forward on every write, even within one millisecond', async () => {
    const task = await createTask(t, c);
    let last = task.updatedAt as string;
    for (let i = 0; i < 5; i += 1) {
      const res = await patch(task.id, { title: `v${i}` }).expect(200);
      expect(micros(res.body.item.updatedAt)).toBeGreaterThan(micros(last));
      last = res.body.item.updatedAt;
    }
    await t.db
      .updateTable('tasks')
      .set({ updated_at: '2999-01-01T00:00:00.000001Z' })
      .where('id', '=', task.id)
      .execute();
    const res = await patch(task.id, { title: 'after a clock jump' }).expect(200);
    expect(res.body.item.updatedAt).toBe('2999-01-01T00:00:00.000002Z');
  });

  it('honours If-Match: the current ETag and * pass; a stale or weak tag is 412 and writes nothing', async () => {
    const task = await createTask(t, c, { title: 'v1' });
    const etag = `"${task.updatedAt}"`;
    const ok = await patch(task.id, { title: 'v2' }).set('If-Match', etag).expect(200);
    for (const stale of [etag, `W/"${ok.body.item.updatedAt}"`, '"2000-01-01T00:00:00Z"']) {
      const res = await patch(task.id, { title: 'lost' }).set('If-Match', stale).expect(412);
      expect(res.body.error.code).toBe('precondition_failed');
    }
    const row = await t.db
      .selectFrom('tasks')
      .select(['title', 'updated_at'])
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ title: 'v2', updated_at: ok.body.item.updatedAt });
    await patch(task.id, { title: 'v3' }).set('If-Match', '*').expect(200);
    await patch(task.id, { title: 'v4' })
      .set(
        'If-Match',
        `"stale", "${(await t.http().get(url(task.id)).set('Authorization', c.auth)).body.item.updatedAt}"`,
      )
      .expect(200);
  });

  it('answers 400 for a malformed If-Match', async () => {
    const task = await createTask(t, c);
    const res = await patch(task.id, { title: 'x' }).set('If-Match', task.updatedAt).expect(400);
    expect(res.body.error.details).toEqual([{ path: 'If-Match', message: expect.any(String) }]);
  });

  it('lets exactly one of two writers racing with the same If-Match win', async () => {
    const task = await createTask(t, c, { title: 'race' });
    const etag = `"${task.updatedAt}"`;
    const results = await Promise.all(
      ['left', 'right', 'third'].map((title) => patch(task.id, { title }).set('If-Match', etag)),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 412, 412]);
    const winner = results.find((r) => r.status === 200)!;
    const row = await t.db.selectFrom('tasks').select('title').where('id', '=', task.id).executeTakeFirstOrThrow();
    expect(row.title).toBe(winner.body.item.title);
  });

  it("answers 404 before 412: another workspace's task with a stale If-Match is 404", async () => {
    const other = await t.caller();
    const foreign = await createTask(t, other);
    await patch(foreign.id, { title: 'x' }).set('If-Match', '"stale"').expect(404);
    await patch(MISSING, { title: 'x' }).expect(404);
    await patch('nope', { title: 'x' }).expect(404);
    const deleted = await createTask(t, c);
    await t.http().delete(url(deleted.id)).set('Authorization', c.auth).expect(200);
    await patch(deleted.id, { title: 'x' }).set('If-Match', `"${deleted.updatedAt}"`).expect(404);
    await patch(deleted.id, { title: 'x' }).expect(404);
  });

  it('answers 412 for an If-Match tag that looks like a version but names no real instant', async () => {
    const task = await createTask(t, c, { title: 'kept' });
    for (const tag of [
      '"2031-02-30T00:00:00Z"',
      '"9999-99-99T99:99:99Z"',
      '"0000-01-01T00:00:00Z"',
      '"2031-01-01T24:00:00Z"',
      '""',
    ]) {
      expect((await patch(task.id, { title: 'lost' }).set('If-Match', tag).expect(412)).body.error.code).toBe(
        'precondition_failed',
      );
    }
    expect((await t.http().get(url(task.id)).set('Authorization', c.auth).expect(200)).body.item.title).toBe('kept');
  });

  it('answers 400 for invalid fields and 422 for a bad priority or a changed past due time', async () => {
    const task = await createTask(t, c);
    expect((await patch(task.id, { title: '' }).expect(400)).body.error.code).toBe('validation_failed');
    expect((await patch(task.id, { goalId: MISSING }).expect(400)).body.error.details).toEqual([
      { path: '/goalId', message: expect.any(String) },
    ]);
    expect((await patch(task.id, { dueAt: '2030-02-30T10:00:00Z' }).expect(400)).body.error.code).toBe(
      'validation_failed',
    );
    expect((await patch(task.id, { recurrence: 'sometimes' }).expect(400)).body.error.code).toBe('validation_failed');
    expect((await patch(task.id, { priority: 'urgent' }).expect(422)).body.error.code).toBe('invalid_priority');
    expect((await patch(task.id, { dueAt: daysFromNow(-2) }).expect(422)).body.error.code).toBe('due_date_in_past');
  });

  it("accepts the task's own due time back once it has passed", async () => {
    const task = await createTask(t, c, { dueAt: daysFromNow(1) });
    await t.db.updateTable('tasks').set({ due_at: '2020-01-01T09:00:00Z' }).where('id', '=', task.id).execute();
    const res = await patch(task.id, { dueAt: '2020-01-01T10:00:00+01:00', title: 'renamed' }).expect(200);
    expect(res.body.item).toMatchObject({ dueAt: '2020-01-01T09:00:00Z', title: 'renamed' });
  });

  it('moves a task under a parent and back to the top level (at the end of the manual order)', async () => {
    const parent = await createTask(t, c, { title: 'p' });
    const task = await createTask(t, c, { title: 'mover' });
    const under = await patch(task.id, { parentId: parent.id }).expect(200);
    expect(under.body.item.parentId).toBe(parent.id);
    const row = await t.db.selectFrom('tasks').select('position').where('id', '=', task.id).executeTakeFirstOrThrow();
    expect(row.position).toBeNull();
    const back = await patch(task.id, { parentId: null }).expect(200);
    expect(back.body.item.parentId).toBeNull();
    const last = await t.db
      .selectFrom('tasks')
      .select('id')
      .where('workspace_id', '=', c.workspaceId)
      .where('parent_id', 'is', null)
      .where('deleted_at', 'is', null)
      .orderBy('position', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    expect(last.id).toBe(task.id);
  });

  it('refuses parent changes that would nest or loop (404 / 422)', async () => {
    const parent = await createTask(t, c, { title: 'p' });
    const child = await createTask(t, c, { title: 'c', parentId: parent.id });
    const other = await createTask(t, c, { title: 'o' });
    const foreign = await createTask(t, await t.caller());
    expect((await patch(other.id, { parentId: child.id }).expect(422)).body.error.code).toBe('parent_is_subtask');
    expect((await patch(parent.id, { parentId: other.id }).expect(422)).body.error.code).toBe('task_has_subtasks');
    expect((await patch(other.id, { parentId: other.id }).expect(422)).body.error.code).toBe('parent_is_self');
    expect((await patch(other.id, { parentId: foreign.id }).expect(404)).body.error.code).toBe('not_found');
  });

  it('needs tasks:write (403)', async () => {
    const task = await createTask(t, c);
    const reader = await t.caller(['tasks:read']);
    await t.http().patch(url(task.id)).set('Authorization', reader.auth).send({ title: 'x' }).expect(403);
  });
});

describe('DELETE /api/v1/tasks/{id}', () => {
  it('soft-deletes the task and its subtasks, returns it, and hides it from get-one, lists and search', async () => {
    const task = await createTask(t, c, { title: 'vanishing zebra' });
    const sub = await createTask(t, c, { title: 'zebra child', parentId: task.id });
    const res = await t.http().delete(url(task.id)).set('Authorization', c.auth).expect(200);
    expect(res.body.item).toMatchObject({ id: task.id, title: 'vanishing zebra' });
    expect(Object.keys(res.body.item).sort()).toEqual(TASK_FIELDS);
    expect(res.headers.etag).toBe(`"${res.body.item.updatedAt}"`);
    const rows = await t.db
      .selectFrom('tasks')
      .select(['id', 'deleted_at'])
      .where('id', 'in', [task.id, sub.id])
      .execute();
    for (const row of rows) expect(row.deleted_at).not.toBeNull();
    await t.http().get(url(task.id)).set('Authorization', c.auth).expect(404);
    await t.http().get(url(sub.id)).set('Authorization', c.auth).expect(404);
    const list = await t.http().get('/api/v1/tasks?limit=200').set('Authorization', c.auth).expect(200);
    expect(list.body.items.map((i: { id: string }) => i.id)).not.toContain(task.id);
    const search = await t.http().get('/api/v1/tasks?q=zebra').set('Authorization', c.auth).expect(200);
    expect(search.body.items).toEqual([]);
    await t.http().delete(url(task.id)).set('Authorization', c.auth).expect(404);
  });

  it('honours If-Match (412, nothing deleted) and answers 404 for foreign or missing tasks', async () => {
    const task = await createTask(t, c);
    await t
      .http()
      .delete(url(task.id))
      .set('Authorization', c.auth)
      .set('If-Match', '"2000-01-01T00:00:00Z"')
      .expect(412);
    const row = await t.db.selectFrom('tasks').select('deleted_at').where('id', '=', task.id).executeTakeFirstOrThrow();
    expect(row.deleted_at).toBeNull();
    await t.http().delete(url(task.id)).set('Authorization', c.auth).set('If-Match', `"${task.updatedAt}"`).expect(200);
    const foreign = await createTask(t, await t.caller());
    await t.http().delete(url(foreign.id)).set('Authorization', c.auth).expect(404);
    await t.http().delete(url(MISSING)).set('Authorization', c.auth).expect(404);
  });

  it('needs tasks:write (403)', async () => {
    const task = await createTask(t, c);
    const reader = await t.caller(['tasks:read']);
    await t.http().delete(url(task.id)).set('Authorization', reader.auth).expect(403);
  });
});
