import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { createTask, daysFromNow } from './helpers/factories.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  c = await t.caller();
});
afterAll(() => t.close());

const url = (id: string) => `/api/v1/tasks/${id}/reminders`;
const MISSING = '00000000-0000-4000-8000-000000000000';
const REMINDER_FIELDS = ['at', 'before', 'firedAt', 'firesAt', 'id', 'taskId'];

const add = (id: string, body: object, caller: Caller = c) =>
  t.http().post(url(id)).set('Authorization', caller.auth).send(body);
const list = async (id: string) =>
  (await t.http().get(url(id)).set('Authorization', c.auth).expect(200)).body.items as Record<string, any>[];

describe('POST /api/v1/tasks/{id}/reminders', () => {
  it('adds a reminder at an instant: 201 with the six fields, firesAt the instant in UTC', async () => {
    const task = await createTask(t, c);
    const res = await add(task.id, { at: '2031-03-04T10:00:00+02:00' }).expect(201);
    expect(Object.keys(res.body).sort()).toEqual(REMINDER_FIELDS);
    expect(res.body).toMatchObject({ taskId: task.id, before: null, firedAt: null });
    expect(res.body.at).toBe('2031-03-04T08:00:00Z');
    expect(res.body.firesAt).toBe('2031-03-04T08:00:00Z');
  });

  it('adds a reminder before dueAt: firesAt is dueAt minus the duration, before kept as sent', async () => {
    const task = await createTask(t, c, { dueAt: '2031-05-01T12:00:00Z' });
    const res = await add(task.id, { before: 'P1DT2H30M' }).expect(201);
    expect(res.body).toMatchObject({ at: null, before: 'P1DT2H30M', firedAt: null });
    expect(res.body.firesAt).toBe('2031-04-30T09:30:00Z');
    const week = await add(task.id, { before: 'P1W' }).expect(201);
    expect(week.body.firesAt).toBe('2031-04-24T12:00:00Z');
  });

  it('answers 409 no_due_time for a relative reminder of a task without dueAt', async () => {
    const task = await createTask(t, c);
    const res = await add(task.id, { before: 'PT15M' }).expect(409);
    expect(res.body.error.code).toBe('no_due_time');
    expect(await list(task.id)).toEqual([]);
  });

  it('takes durations from PT1M to P30D only (400 with path /before)', async () => {
    const task = await createTask(t, c, { dueAt: daysFromNow(60) });
    for (const before of ['PT1M', 'PT60S', 'P30D', 'PT720H']) await add(task.id, { before }).expect(201);
    for (const before of ['PT59S', 'P30DT1S', 'P31D', 'P5W', 'P1M', 'P1Y', 'P', 'PT', '15 minutes', 'PT0M']) {
      const res = await add(task.id, { before }).expect(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain('/before');
    }
  });

  it('needs exactly one of at and before, and a real instant (400)', async () => {
    const task = await createTask(t, c, { dueAt: daysFromNow(3) });
    for (const body of [
      {},
      { at: daysFromNow(1), before: 'PT5M' },
      { at: 'tomorrow' },
      { at: '2031-02-30T10:00:00Z' },
      { when: 'x' },
    ])
      expect((await add(task.id, body).expect(400)).body.error.code).toBe('validation_failed');
    expect(await list(task.id)).toEqual([]);
  });

  it("answers 404 for another account's, a deleted, a missing or a non-UUID task", async () => {
    const other = await t.caller();
    const foreign = await createTask(t, other, { dueAt: daysFromNow(2) });
    const deleted = await createTask(t, c);
    await t.http().delete(`/api/v1/tasks/${deleted.id}`).set('Authorization', c.auth).expect(200);
    for (const id of [foreign.id, deleted.id, MISSING, 'nope']) {
      expect((await add(id, { at: daysFromNow(1) }).expect(404)).body.error.code).toBe('not_found');
      await t.http().get(url(id)).set('Authorization', c.auth).expect(404);
    }
    const own = await add(foreign.id, { at: daysFromNow(1) }, other).expect(201);
    await t
      .http()
      .delete(`${url(foreign.id)}/${own.body.id}`)
      .set('Authorization', c.auth)
      .expect(404);
    expect(await t.db.selectFrom('task_reminders').select('id').where('id', '=', own.body.id).execute()).toHaveLength(
      1,
    );
  });

  it('keeps at most 20 a task (409 reminder_limit_reached)', async () => {
    const task = await createTask(t, c);
    for (let i = 0; i < 20; i++) await add(task.id, { at: daysFromNow(1 + i) }).expect(201);
    const res = await add(task.id, { at: daysFromNow(30) }).expect(409);
    expect(res.body.error.code).toBe('reminder_limit_reached');
    expect(await list(task.id)).toHaveLength(20);
  });

  it('gives the last place to one of two concurrent creates: one 201, one 409', async () => {
    for (let round = 0; round < 5; round++) {
      const task = await createTask(t, c);
      for (let i = 0; i < 19; i++) await add(task.id, { at: daysFromNow(1 + i) }).expect(201);
      const statuses = (
        await Promise.all([add(task.id, { at: daysFromNow(40) }), add(task.id, { at: daysFromNow(41) })])
      )
        .map((r) => r.status)
        .sort();
      expect(statuses).toEqual([201, 409]);
      expect(await list(task.id)).toHaveLength(20);
    }
  });

  it('needs tasks:write (403), checked before the task is looked up', async () => {
    const reader = await t.caller(['tasks:read']);
    const task = await createTask(t, c);
    const res = await add(task.id, { at: daysFromNow(1) }, reader).expect(403);
    expect(res.body.error.code).toBe('insufficient_scope');
  });
});

describe('GET and DELETE /api/v1/tasks/{id}/reminders', () => {
  it('lists them oldest first; DELETE removes one (204), then 404', async () => {
    const task = await createTask(t, c, { dueAt: daysFromNow(5) });
    const a = (await add(task.id, { at: daysFromNow(1) }).expect(201)).body;
    const b = (await add(task.id, { before: 'PT10M' }).expect(201)).body;
    expect(await list(task.id)).toEqual([a, b]);
    const res = await t
      .http()
      .delete(`${url(task.id)}/${a.id}`)
      .set('Authorization', c.auth)
      .expect(204);
    expect(res.text).toBe('');
    expect(await list(task.id)).toEqual([b]);
    for (const id of [a.id, MISSING, 'x'])
      expect(
        (
          await t
            .http()
            .delete(`${url(task.id)}/${id}`)
            .set('Authorization', c.auth)
            .expect(404)
        ).body.error.code,
      ).toBe('not_found');
  });
});

describe('relative reminders follow the due time', () => {
  it('moves firesAt with a dueAt edit (absolute ones stay; no dueAt: no firesAt)', async () => {
    const task = await createTask(t, c, { dueAt: '2031-06-10T09:00:00Z' });
    const rel = (await add(task.id, { before: 'PT1H' }).expect(201)).body;
    const abs = (await add(task.id, { at: '2031-06-01T00:00:00Z' }).expect(201)).body;
    await t
      .http()
      .patch(`/api/v1/tasks/${task.id}`)
      .set('Authorization', c.auth)
      .send({ dueAt: '2031-07-01T18:00:00Z' })
      .expect(200);
    let [r, a] = await list(task.id);
    expect(r).toMatchObject({ id: rel.id, firesAt: '2031-07-01T17:00:00Z' });
    expect(a).toEqual(abs);
    await t.http().patch(`/api/v1/tasks/${task.id}`).set('Authorization', c.auth).send({ dueAt: null }).expect(200);
    [r, a] = await list(task.id);
    expect(r!.firesAt).toBeNull();
    expect(a).toEqual(abs);
  });

  it("copies a recurring task's relative reminders to its next occurrence, before the new dueAt", async () => {
    const task = await createTask(t, c, { dueAt: '2031-06-10T09:00:00Z', recurrence: 'every day' });
    await add(task.id, { before: 'PT30M' }).expect(201);
    await add(task.id, { at: '2031-06-09T09:00:00Z' }).expect(201);
    const done = await t
      .http()
      .post(`/api/v1/tasks/${task.id}/complete`)
      .set('Authorization', c.auth)
      .set('X-Timezone', 'UTC')
      .expect(200);
    const next = done.body.next;
    expect(next.dueAt).toBe('2031-06-11T09:00:00Z');
    const copies = await list(next.id);
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatchObject({
      taskId: next.id,
      at: null,
      before: 'PT30M',
      firesAt: '2031-06-11T08:30:00Z',
      firedAt: null,
    });
    expect(await list(task.id)).toHaveLength(2);
  });
});
