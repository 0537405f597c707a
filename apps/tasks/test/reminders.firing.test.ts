import { startReceiver, type Receiver } from '@app/devstack';
import { createTask } from './helpers/factories.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

const ENV = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200', RATE_LIMIT_PER_MINUTE: '100000' };

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp(ENV, { webhooks: true });
});
afterAll(() => t.close());
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(() => receiver.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

async function subscribe(app: TestApp, c: Caller, events: string[]): Promise<void> {
  await app
    .http()
    .post('/api/v1/webhooks')
    .set('Authorization', c.auth)
    .send({ url: receiver.url, events })
    .expect(201);
}

async function remind(app: TestApp, c: Caller, taskId: string, body: object): Promise<Record<string, any>> {
  return (
    await app.http().post(`/api/v1/tasks/${taskId}/reminders`).set('Authorization', c.auth).send(body).expect(201)
  ).body;
}

const ofType = (type: string) => receiver.received.filter((r) => r.event.type === type);

describe('reminder.fired', () => {
  it('is sent once at firesAt (within 2 s) with { reminder, task }, and firedAt is set', async () => {
    const c = await t.caller();
    await subscribe(t, c, ['reminder.fired']);
    const task = await createTask(t, c, { dueAt: inMs(3_600_000) });
    const reminder = await remind(t, c, task.id, { at: inMs(1_500) });
    await receiver.waitFor((all) => all.length >= 1, 5_000);
    const [fired] = ofType('reminder.fired');
    expect(fired!.at - Date.parse(reminder.firesAt)).toBeGreaterThanOrEqual(0);
    expect(fired!.at - Date.parse(reminder.firesAt)).toBeLessThan(2_000);
    expect(fired!.event.data.task).toEqual(task);
    expect(fired!.event.data.reminder).toMatchObject({ id: reminder.id, taskId: task.id, firesAt: reminder.firesAt });
    expect(fired!.event.data.reminder.firedAt).not.toBeNull();
    // The job that fired it is the actor, by name.
    expect(fired!.event.actor).toEqual({ type: 'system', id: 'reminder' });
    const listed = await t.http().get(`/api/v1/tasks/${task.id}/reminders`).set('Authorization', c.auth).expect(200);
    expect(listed.body.items[0]).toEqual(fired!.event.data.reminder);
    await sleep(1_500);
    expect(receiver.received).toHaveLength(1);
  });

  it('follows a dueAt edit: a relative reminder fires before the new due time', async () => {
    const c = await t.caller();
    await subscribe(t, c, ['reminder.fired']);
    const task = await createTask(t, c, { dueAt: inMs(3_600_000) });
    const reminder = await remind(t, c, task.id, { before: 'PT1M' });
    const dueAt = inMs(61_500);
    await t.http().patch(`/api/v1/tasks/${task.id}`).set('Authorization', c.auth).send({ dueAt }).expect(200);
    await receiver.waitFor((all) => all.length >= 1, 5_000);
    const [fired] = receiver.received;
    const firesAt = Date.parse(dueAt) - 60_000;
    expect(fired!.event.data.reminder.id).toBe(reminder.id);
    expect(Date.parse(fired!.event.data.reminder.firesAt)).toBe(firesAt);
    expect(fired!.at - firesAt).toBeGreaterThanOrEqual(0);
    expect(fired!.at - firesAt).toBeLessThan(2_000);
  });

  it('does not fire for a completed or a deleted task', async () => {
    const c = await t.caller();
    await subscribe(t, c, ['reminder.fired']);
    const done = await createTask(t, c);
    const gone = await createTask(t, c);
    await remind(t, c, done.id, { at: inMs(1_000) });
    await remind(t, c, gone.id, { at: inMs(1_000) });
    await t.http().post(`/api/v1/tasks/${done.id}/complete`).set('Authorization', c.auth).expect(200);
    await t.http().delete(`/api/v1/tasks/${gone.id}`).set('Authorization', c.auth).expect(200);
    await sleep(3_000);
    expect(receiver.received).toEqual([]);
    const rows = await t.db
      .selectFrom('task_reminders')
      .select('fired_at')
      .where('task_id', 'in', [done.id, gone.id])
      .execute();
    expect(rows).toEqual([{ fired_at: null }, { fired_at: null }]);
  });

  it('fires once across a restart of the worker, and fires what came due while none ran', async () => {
    const api = await startTestApp(ENV);
    let worker = await startTestApp(ENV, { shareWith: api, webhooks: true });
    try {
      const c = await api.caller();
      await subscribe(api, c, ['reminder.fired']);
      const task = await createTask(api, c, { dueAt: inMs(3_600_000) });
      const first = await remind(api, c, task.id, { at: inMs(1_000) });
      await receiver.waitFor((all) => all.length >= 1, 5_000);
      await worker.close();
      const second = await remind(api, c, task.id, { at: inMs(500) });
      await sleep(1_500);
      expect(receiver.received).toHaveLength(1);
      worker = await startTestApp(ENV, { shareWith: api, webhooks: true });
      await receiver.waitFor((all) => all.length >= 2, 5_000);
      await sleep(1_500);
      expect(receiver.received.map((r) => r.event.data.reminder.id)).toEqual([first.id, second.id]);
    } finally {
      await worker.close();
      await api.close();
    }
  });
});

describe('task.due', () => {
  it("is sent once at an open task's dueAt (within 2 s) with the task as data; not for a completed task", async () => {
    const c = await t.caller();
    await subscribe(t, c, ['task.due']);
    const task = await createTask(t, c, { dueAt: inMs(1_500) });
    const done = await createTask(t, c, { dueAt: inMs(1_000) });
    await t.http().post(`/api/v1/tasks/${done.id}/complete`).set('Authorization', c.auth).expect(200);
    await receiver.waitFor((all) => all.length >= 1, 5_000);
    await sleep(2_000);
    expect(receiver.received).toHaveLength(1);
    const [due] = receiver.received;
    expect(due!.event).toMatchObject({ type: 'task.due', data: task, actor: { type: 'system', id: 'task_due' } });
    expect(due!.at - Date.parse(task.dueAt)).toBeLessThan(2_000);
    expect(due!.at - Date.parse(task.dueAt)).toBeGreaterThanOrEqual(0);
  });
});
