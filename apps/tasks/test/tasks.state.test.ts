import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { TASK_FIELDS, createTask } from './helpers/factories.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  c = await t.caller();
});
afterAll(() => t.close());

const MISSING = '00000000-0000-4000-8000-000000000000';
const action = (id: string, what: 'complete' | 'reopen' | 'auto-tag', caller: Caller = c) =>
  t.http().post(`/api/v1/tasks/${id}/${what}`).set('Authorization', caller.auth);
const remove = (id: string) => t.http().delete(`/api/v1/tasks/${id}`).set('Authorization', c.auth).expect(200);

describe('POST /api/v1/tasks/{id}/complete', () => {
  it('completes an open task: completedAt set, next null without a recurrence, new ETag', async () => {
    const task = await createTask(t, c);
    const res = await action(task.id, 'complete').expect(200);
    expect(res.body.next).toBeNull();
    expect(res.body.item.completedAt).toEqual(expect.stringMatching(/Z$/));
    expect(Object.keys(res.body.item).sort()).toEqual(TASK_FIELDS);
    expect(res.headers.etag).toBe(`"${res.body.item.updatedAt}"`);
    const row = await t.db
      .selectFrom('tasks')
      .select('completed_at')
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    expect(row.completed_at).toBe(res.body.item.completedAt);
  });

  it('answers 409 task_already_completed for a completed task and 409 task_deleted for a deleted one', async () => {
    const done = await createTask(t, c);
    await action(done.id, 'complete').expect(200);
    expect((await action(done.id, 'complete').expect(409)).body.error.code).toBe('task_already_completed');
    const deleted = await createTask(t, c);
    await remove(deleted.id);
    expect((await action(deleted.id, 'complete').expect(409)).body.error.code).toBe('task_deleted');
  });

  it('answers 404 for a missing, foreign or non-UUID id, and 412 for a stale If-Match (nothing written)', async () => {
    const foreign = await createTask(t, await t.caller());
    for (const id of [MISSING, foreign.id, 'abc']) await action(id, 'complete').expect(404);
    await action(foreign.id, 'complete').set('If-Match', '"stale"').expect(404);
    const task = await createTask(t, c);
    expect(
      (await action(task.id, 'complete').set('If-Match', '"2000-01-01T00:00:00Z"').expect(412)).body.error.code,
    ).toBe('precondition_failed');
    const row = await t.db
      .selectFrom('tasks')
      .select('completed_at')
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    expect(row.completed_at).toBeNull();
    await action(task.id, 'complete').set('If-Match', `"${task.updatedAt}"`).expect(200);
  });

  it('accepts no body or {} and answers 400 for any other body', async () => {
    const task = await createTask(t, c);
    expect((await action(task.id, 'complete').send({ force: true }).expect(400)).body.error.code).toBe(
      'validation_failed',
    );
    await action(task.id, 'complete').send({}).expect(200);
  });

  it('needs tasks:write (403)', async () => {
    const task = await createTask(t, c);
    await action(task.id, 'complete', await t.caller(['tasks:read'])).expect(403);
  });
});

describe('POST /api/v1/tasks/{id}/complete with a recurrence', () => {
  it('returns next: the same fields, open, due at the next occurrence, right after the task in the manual order', async () => {
    const task = await createTask(t, c, {
      title: 'water plants',
      notes: 'all of them',
      priority: 'medium',
      tags: ['home'],
      location: 'flat',
      assigneeId: 'me',
      recurrence: 'every 2 days',
      dueAt: '2031-05-10T18:00:00Z',
    });
    const after = await createTask(t, c, { title: 'afterwards' });
    const res = await action(task.id, 'complete').expect(200);
    const next = res.body.next;
    expect(Object.keys(next).sort()).toEqual(TASK_FIELDS);
    expect(next).toMatchObject({
      title: 'water plants',
      notes: 'all of them',
      priority: 'medium',
      tags: ['home'],
      location: 'flat',
      assigneeId: 'me',
      recurrence: 'every 2 days',
      dueAt: '2031-05-12T18:00:00Z',
      completedAt: null,
      parentId: null,
      goalId: null,
    });
    expect(next.id).not.toBe(task.id);
    const list = await t.http().get('/api/v1/tasks?view=all&limit=200').set('Authorization', c.auth).expect(200);
    const ids = list.body.items.map((i: { id: string }) => i.id);
    expect(ids.indexOf(next.id)).toBe(ids.indexOf(task.id) + 1);
    expect(ids.indexOf(after.id)).toBe(ids.indexOf(next.id) + 1);
  });

  it("keeps 09:00 local across a DST change in the caller's X-Timezone, and uses UTC without one", async () => {
    const body = { recurrence: 'every day', dueAt: '2027-03-27T09:00:00+01:00' };
    const berlin = await createTask(t, c, body);
    const res = await action(berlin.id, 'complete').set('X-Timezone', 'Europe/Berlin').expect(200);
    expect(res.body.next.dueAt).toBe('2027-03-28T07:00:00Z');
    const utc = await createTask(t, c, body);
    expect((await action(utc.id, 'complete').expect(200)).body.next.dueAt).toBe('2027-03-28T08:00:00Z');
  });

  it("uses the account's time zone when no X-Timezone is sent", async () => {
    const account = await t.admin('create-account', '--email', 'ny@example.test', '--timezone', 'America/New_York');
    const key = await t.admin('create-key', '--account', account.accountId);
    const ny: Caller = { accountId: account.accountId, workspaceId: account.workspaceId, auth: `Bearer ${key.key}` };
    // 09:00 New York on the Saturday before the US switch to summer time (2027-03-14).
    const task = await createTask(t, ny, { recurrence: 'weekly', dueAt: '2027-03-13T09:00:00-05:00' });
    expect((await action(task.id, 'complete', ny).expect(200)).body.next.dueAt).toBe('2027-03-20T13:00:00Z');
  });

  it.each([
    ['every monday', '2031-01-08T10:00:00Z', '2031-01-13T10:00:00Z'],
    ['every weekday', '2031-01-10T10:00:00Z', '2031-01-13T10:00:00Z'],
    ['every tuesday and thursday', '2031-01-09T10:00:00Z', '2031-01-14T10:00:00Z'],
    ['monthly', '2031-01-31T12:00:00Z', '2031-02-28T12:00:00Z'],
    ['every year', '2032-02-29T12:00:00Z', '2033-02-28T12:00:00Z'],
    ['Every 3 Weeks', '2031-01-01T00:00:00Z', '2031-01-22T00:00:00Z'],
    ['every other monday', '2031-01-06T10:00:00Z', '2031-01-20T10:00:00Z'],
    ['every 3rd friday', '2031-01-17T10:00:00Z', '2031-02-21T10:00:00Z'],
    ['every 31st', '2031-03-31T10:00:00Z', '2031-04-30T10:00:00Z'],
    ['every 27 January', '2031-01-27T10:00:00Z', '2032-01-27T10:00:00Z'],
    ['every 12 hours', '2031-01-06T22:00:00Z', '2031-01-07T10:00:00Z'],
  ])('computes "%s" from %s as %s', async (recurrence, dueAt, expected) => {
    const task = await createTask(t, c, { recurrence, dueAt });
    expect((await action(task.id, 'complete').expect(200)).body.next.dueAt).toBe(expected);
  });

  it.each(['every! 3 days', 'after 3 days'])(
    'counts "%s" from the completion date, keeping the due time of day',
    async (recurrence) => {
      const task = await createTask(t, c, { recurrence, dueAt: '2031-01-06T10:00:00Z' });
      const res = await action(task.id, 'complete').expect(200);
      const completed = new Date(res.body.item.completedAt);
      const expected = new Date(
        Date.UTC(completed.getUTCFullYear(), completed.getUTCMonth(), completed.getUTCDate() + 3, 10),
      );
      expect(Date.parse(res.body.next.dueAt)).toBe(expected.getTime());
    },
  );

  it('repeats a recurring task without a due time without one', async () => {
    const task = await createTask(t, c, { recurrence: 'daily' });
    const res = await action(task.id, 'complete').expect(200);
    expect(res.body.next).toMatchObject({ dueAt: null, recurrence: 'daily', completedAt: null });
  });

  it("copies the live subtasks into next, open, with due times shifted like the parent's", async () => {
    const task = await createTask(t, c, {
      title: 'weekly review',
      recurrence: 'weekly',
      dueAt: '2031-06-02T09:00:00Z',
    });
    const a = await createTask(t, c, { title: 'inbox zero', parentId: task.id, dueAt: '2031-06-02T08:00:00Z' });
    await createTask(t, c, { title: 'plan week', parentId: task.id });
    const gone = await createTask(t, c, { title: 'gone', parentId: task.id });
    await action(a.id, 'complete').expect(200);
    await remove(gone.id);
    const res = await action(task.id, 'complete').expect(200);
    const next = await t.http().get(`/api/v1/tasks/${res.body.next.id}`).set('Authorization', c.auth).expect(200);
    expect(next.body.item.subtasks.map((s: any) => [s.title, s.completedAt, s.dueAt, s.parentId])).toEqual([
      ['inbox zero', null, '2031-06-09T08:00:00Z', res.body.next.id],
      ['plan week', null, null, res.body.next.id],
    ]);
    const original = await t.http().get(`/api/v1/tasks/${task.id}`).set('Authorization', c.auth).expect(200);
    expect(original.body.item.subtasks).toHaveLength(2);
  });

  it('repeats a recurring subtask under the same parent', async () => {
    const parent = await createTask(t, c, { title: 'parent' });
    const sub = await createTask(t, c, {
      title: 'sub',
      parentId: parent.id,
      recurrence: 'daily',
      dueAt: '2031-01-01T10:00:00Z',
    });
    const res = await action(sub.id, 'complete').expect(200);
    expect(res.body.next).toMatchObject({ parentId: parent.id, dueAt: '2031-01-02T10:00:00Z' });
  });
});

describe('POST /api/v1/tasks/{id}/reopen', () => {
  it('reopens a completed task: completedAt null again', async () => {
    const task = await createTask(t, c);
    const done = await action(task.id, 'complete').expect(200);
    const res = await action(task.id, 'reopen').expect(200);
    expect(res.body.item.completedAt).toBeNull();
    expect(res.headers.etag).toBe(`"${res.body.item.updatedAt}"`);
    expect(res.body.item.updatedAt).not.toBe(done.body.item.updatedAt);
  });

  it('answers 409 task_not_completed for an open task and 409 task_deleted for a deleted one', async () => {
    const open = await createTask(t, c);
    expect((await action(open.id, 'reopen').expect(409)).body.error.code).toBe('task_not_completed');
    const deleted = await createTask(t, c);
    await action(deleted.id, 'complete').expect(200);
    await remove(deleted.id);
    expect((await action(deleted.id, 'reopen').expect(409)).body.error.code).toBe('task_deleted');
  });

  it('answers 404 for missing or foreign tasks and 412 for a stale If-Match', async () => {
    const foreign = await createTask(t, await t.caller());
    await action(foreign.id, 'reopen').expect(404);
    await action(MISSING, 'reopen').expect(404);
    const task = await createTask(t, c);
    const done = await action(task.id, 'complete').expect(200);
    await action(task.id, 'reopen').set('If-Match', `"${task.updatedAt}"`).expect(412);
    await action(task.id, 'reopen').set('If-Match', done.headers.etag!).expect(200);
  });

  it('needs tasks:write (403)', async () => {
    const task = await createTask(t, c);
    await action(task.id, 'reopen', await t.caller(['tasks:read'])).expect(403);
  });
});

describe('DELETE of open and completed tasks (state table)', () => {
  it('soft-deletes a completed task and returns it', async () => {
    const task = await createTask(t, c);
    await action(task.id, 'complete').expect(200);
    const res = await remove(task.id);
    expect(res.body.item.completedAt).not.toBeNull();
  });
});

describe('POST /api/v1/tasks/{id}/auto-tag', () => {
  it('returns the unchanged task with tagged false and writes nothing', async () => {
    const task = await createTask(t, c, { title: 'call the dentist about tooth', tags: ['health'] });
    const res = await action(task.id, 'auto-tag').expect(200);
    expect(res.body).toEqual({ item: task, tagged: false });
    expect(res.headers.etag).toBe(`"${task.updatedAt}"`);
    const row = await t.db
      .selectFrom('tasks')
      .select(['updated_at', 'tags'])
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ updated_at: task.updatedAt, tags: ['health'] });
  });

  it('answers 404 for missing, deleted or foreign tasks and 403 without tasks:write', async () => {
    const foreign = await createTask(t, await t.caller());
    const deleted = await createTask(t, c);
    await remove(deleted.id);
    for (const id of [MISSING, foreign.id, deleted.id, 'x']) await action(id, 'auto-tag').expect(404);
    const task = await createTask(t, c);
    await action(task.id, 'auto-tag', await t.caller(['tasks:read'])).expect(403);
    await t.http().post(`/api/v1/tasks/${task.id}/auto-tag`).expect(401);
  });
});
