import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { TASK_FIELDS, createTask, daysFromNow } from './helpers/factories.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  c = await t.caller();
});
afterAll(() => t.close());

const post = (body: unknown, caller: Caller = c) =>
  t
    .http()
    .post('/api/v1/tasks')
    .set('Authorization', caller.auth)
    .send(body as object);
const paths = (res: { body: any }) => (res.body.error.details ?? []).map((d: { path: string }) => d.path);

describe('POST /api/v1/tasks', () => {
  it('creates a task with exactly the 14 fields, defaults filled, and an ETag of its updatedAt', async () => {
    const res = await post({ title: 'Buy milk' }).expect(201);
    const item = res.body.item;
    expect(Object.keys(item).sort()).toEqual(TASK_FIELDS);
    expect(item).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'Buy milk',
      notes: null,
      priority: null,
      dueAt: null,
      completedAt: null,
      tags: [],
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
      parentId: null,
      goalId: null,
      recurrence: null,
      location: null,
      assigneeId: null,
    });
    expect(res.headers.etag).toBe(`"${item.updatedAt}"`);
    const row = await t.db
      .selectFrom('tasks')
      .select(['title', 'workspace_id'])
      .where('id', '=', item.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ title: 'Buy milk', workspace_id: c.workspaceId });
  });

  it('stores every input field and converts a due time with an offset to UTC', async () => {
    const year = new Date().getUTCFullYear() + 2;
    const res = await post({
      title: 'Full',
      notes: 'some notes',
      priority: 'high',
      dueAt: `${year}-03-01T10:30:00+02:00`,
      tags: ['home', 'errand', 'home'],
      recurrence: 'every 2 weeks',
      location: 'Berlin',
      assigneeId: 'user-7',
    }).expect(201);
    expect(res.body.item).toMatchObject({
      title: 'Full',
      notes: 'some notes',
      priority: 'high',
      dueAt: `${year}-03-01T08:30:00Z`,
      tags: ['home', 'errand'],
      recurrence: 'every 2 weeks',
      location: 'Berlin',
      assigneeId: 'user-7',
      goalId: null,
    });
    const minus = await post({ title: 'x', dueAt: `${year}-03-01T23:15-05:30` }).expect(201);
    expect(minus.body.item.dueAt).toBe(`${year}-03-02T04:45:00Z`);
    const widest = await post({ title: 'x', dueAt: `${year}-03-02T10:00:00+14:00` }).expect(201);
    expect(widest.body.item.dueAt).toBe(`${year}-03-01T20:00:00Z`);
    const fraction = await post({ title: 'x', dueAt: `${year}-03-01T10:00:00.123456Z` }).expect(201);
    expect(fraction.body.item.dueAt).toBe(`${year}-03-01T10:00:00.123456Z`);
  });

  it('accepts every limit of the Limits table at its maximum', async () => {
    await post({
      title: 't'.repeat(500),
      notes: 'n'.repeat(20000),
      tags: Array.from({ length: 50 }, (_, i) => `${i}`.padEnd(50, 'x')),
      recurrence: 'every 2 weeks'.padEnd(50, ' '),
      location: 'l'.repeat(500),
      assigneeId: 'a',
    }).expect(201);
  });

  it.each([
    ['a missing title', { notes: 'x' }, '/title'],
    ['an empty title', { title: '' }, '/title'],
    ['a white-space title', { title: '   ' }, '/title'],
    ['a 501-character title', { title: 't'.repeat(501) }, '/title'],
    ['20001 characters of notes', { title: 'x', notes: 'n'.repeat(20001) }, '/notes'],
    ['51 tags', { title: 'x', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, '/tags'],
    ['an empty tag', { title: 'x', tags: [''] }, '/tags/0'],
    ['a 51-character tag', { title: 'x', tags: ['t'.repeat(51)] }, '/tags/0'],
    ['a tag that is not a string', { title: 'x', tags: [1] }, '/tags/0'],
    ['an empty recurrence', { title: 'x', recurrence: '' }, '/recurrence'],
    ['a 51-character recurrence', { title: 'x', recurrence: 'every day'.padEnd(51, ' ') }, '/recurrence'],
    ['a 501-character location', { title: 'x', location: 'l'.repeat(501) }, '/location'],
    ['an empty assigneeId', { title: 'x', assigneeId: '' }, '/assigneeId'],
    ['a parentId that is not a UUID', { title: 'x', parentId: 'abc' }, '/parentId'],
    ['goalId (not settable)', { title: 'x', goalId: null }, '/goalId'],
    ['an unknown property', { title: 'x', color: 'red' }, '/color'],
    ['a title that is not a string', { title: 5 }, '/title'],
    ['a priority that is not a string', { title: 'x', priority: 1 }, '/priority'],
    ['a due time without an offset', { title: 'x', dueAt: '2099-01-01T10:00:00' }, '/dueAt'],
    ['a date without a time', { title: 'x', dueAt: '2099-01-01' }, '/dueAt'],
    ['a due time at 24:00', { title: 'x', dueAt: '2099-01-01T24:00:00Z' }, '/dueAt'],
    ['a due time on February 30th', { title: 'x', dueAt: '2030-02-30T10:00:00Z' }, '/dueAt'],
    ['a due time on a 29th of February outside a leap year', { title: 'x', dueAt: '2031-02-29T10:00:00Z' }, '/dueAt'],
    ['a due time with an offset past +14:00', { title: 'x', dueAt: '2099-01-01T10:00:00+14:30' }, '/dueAt'],
    ['a due time with an offset past -14:00', { title: 'x', dueAt: '2099-01-01T10:00:00-14:01' }, '/dueAt'],
    ['repeat text it cannot read', { title: 'x', recurrence: 'whenever I feel like it' }, '/recurrence'],
    ['a NUL character in the title', { title: 'a\u0000b' }, '/title'],
    ['a NUL character in a tag', { title: 'x', tags: ['ok', 'b\u0000'] }, '/tags/1'],
  ])('answers 400 validation_failed for %s', async (_name, body, path) => {
    const res = await post(body).expect(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(paths(res)).toContain(path);
  });

  it('answers 400 for a body that is an array, empty, or not JSON-typed', async () => {
    const arr = await post([{ title: 'never stored' }]).expect(400);
    expect(arr.body.error.code).toBe('validation_failed');
    const none = await t.http().post('/api/v1/tasks').set('Authorization', c.auth).expect(400);
    expect(none.body.error.code).toBe('validation_failed');
    const text = await t
      .http()
      .post('/api/v1/tasks')
      .set('Authorization', c.auth)
      .set('Content-Type', 'text/plain')
      .send('title=never stored')
      .expect(400);
    expect(text.body.error.code).toBe('validation_failed');
    expect(
      await t.db
        .selectFrom('tasks')
        .select('id')
        .where('workspace_id', '=', c.workspaceId)
        .where('title', '=', 'never stored')
        .execute(),
    ).toHaveLength(0);
  });

  it('answers 422 invalid_priority for a priority string outside high/medium/low', async () => {
    for (const priority of ['urgent', 'High', '']) {
      const res = await post({ title: 'x', priority }).expect(422);
      expect(res.body.error).toMatchObject({
        code: 'invalid_priority',
        details: [{ path: '/priority', message: expect.any(String) }],
      });
    }
  });

  it('answers 422 due_date_in_past for a due time in the past, and accepts null', async () => {
    const res = await post({ title: 'x', dueAt: daysFromNow(-1) }).expect(422);
    expect(res.body.error.code).toBe('due_date_in_past');
    await post({ title: 'x', dueAt: '2000-01-01T00:00:00Z' }).expect(422);
    const ok = await post({ title: 'x', dueAt: null, priority: null, notes: null }).expect(201);
    expect(ok.body.item).toMatchObject({ dueAt: null, priority: null, notes: null });
  });

  it('reports 400 before 422 when both apply', async () => {
    const res = await post({ title: '', priority: 'urgent' }).expect(400);
    expect(res.body.error.code).toBe('validation_failed');
  });

  it('needs the tasks:write scope (403) and a valid key (401)', async () => {
    const reader = await t.caller(['tasks:read']);
    const res = await post({ title: 'x' }, reader).expect(403);
    expect(res.body.error.code).toBe('insufficient_scope');
    await t.http().post('/api/v1/tasks').send({ title: 'x' }).expect(401);
  });

  it('accepts a session from an allowed origin and refuses it cross-origin with 403', async () => {
    const { cookie } = await t.admin('create-session', '--account', c.accountId);
    await t
      .http()
      .post('/api/v1/tasks')
      .set('Cookie', cookie)
      .set('Origin', 'https://app.example.test')
      .send({ title: 'from the browser' })
      .expect(201);
    const res = await t
      .http()
      .post('/api/v1/tasks')
      .set('Cookie', cookie)
      .set('Origin', 'https://evil.example')
      .send({ title: 'x' })
      .expect(403);
    expect(res.body.error.code).toBe('cross_origin');
  });

  it('answers 400 validation_failed for an unknown X-Timezone', async () => {
    const res = await post({ title: 'x' }).set('X-Timezone', 'Mars/Olympus').expect(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', details: [{ path: 'X-Timezone' }] });
  });
});

describe('POST /api/v1/tasks with parentId (subtasks)', () => {
  it('creates a subtask of a top-level task', async () => {
    const parent = await createTask(t, c, { title: 'parent' });
    const sub = await post({ title: 'child', parentId: parent.id }).expect(201);
    expect(sub.body.item.parentId).toBe(parent.id);
  });

  it('answers 404 for a parent that is missing, deleted or in another workspace', async () => {
    const other = await t.caller();
    const foreign = await createTask(t, other, { title: 'theirs' });
    const deleted = await createTask(t, c, { title: 'gone' });
    await t.http().delete(`/api/v1/tasks/${deleted.id}`).set('Authorization', c.auth).expect(200);
    for (const parentId of [foreign.id, deleted.id, '00000000-0000-4000-8000-000000000000']) {
      const res = await post({ title: 'child', parentId }).expect(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect(await t.db.selectFrom('tasks').select('id').where('parent_id', '=', foreign.id).execute()).toHaveLength(0);
  });

  it('answers 422 parent_is_subtask: subtasks do not nest', async () => {
    const parent = await createTask(t, c, { title: 'parent' });
    const sub = await createTask(t, c, { title: 'child', parentId: parent.id });
    const res = await post({ title: 'grandchild', parentId: sub.id }).expect(422);
    expect(res.body.error.code).toBe('parent_is_subtask');
  });

  it('answers 409 subtask_limit_reached past 200 live subtasks, even under concurrent creates', async () => {
    const parent = await createTask(t, c, { title: 'big parent' });
    await t.db
      .insertInto('tasks')
      .values(
        Array.from({ length: 195 }, (_, i) => ({
          workspace_id: c.workspaceId,
          parent_id: parent.id,
          title: `sub ${i}`,
          position: null,
        })),
      )
      .execute();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post({ title: `race ${i}`, parentId: parent.id })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    for (const r of results.filter((r) => r.status !== 201)) expect(r.body.error.code).toBe('subtask_limit_reached');
    const count = await t.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('parent_id', '=', parent.id)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(200);
  });
});
