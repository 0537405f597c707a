import { startReceiver, type Receiver } from '@app/devstack';
import { sql } from 'kysely';
import { createTask } from './helpers/factories.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200' }, { webhooks: true });
});
afterAll(() => t.close());
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(() => receiver.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hooks = (c: Caller) => ({
  post: (body: Record<string, unknown>) => t.http().post('/api/v1/webhooks').set('Authorization', c.auth).send(body),
  patch: (id: string, body: Record<string, unknown>) =>
    t.http().patch(`/api/v1/webhooks/${id}`).set('Authorization', c.auth).send(body),
  get: (id = '') =>
    t
      .http()
      .get(`/api/v1/webhooks${id && `/${id}`}`)
      .set('Authorization', c.auth),
});
const edit = (c: Caller, id: string, body: Record<string, unknown>) =>
  t.http().patch(`/api/v1/tasks/${id}`).set('Authorization', c.auth).send(body).expect(200);
/** The titles of the tasks the receiver got, in order. */
const titles = () => receiver.received.map((r) => (r.event.data.task ?? r.event.data).title as string);

describe('the filter of a task webhook subscription', () => {
  it('is stored as written, shown by create, GET and list, changed by PATCH and cleared by null', async () => {
    const c = await t.caller();
    const h = hooks(c);
    const made = await h
      .post({ url: receiver.url, events: ['task.created'], filter: '#work & !completed' })
      .expect(201);
    expect(made.body).toMatchObject({ filter: '#work & !completed', secret: expect.any(String) });
    const plain = await h.post({ url: receiver.url, events: ['task.created'] }).expect(201);
    expect(plain.body.filter).toBeNull();
    expect((await h.get(made.body.id).expect(200)).body.filter).toBe('#work & !completed');
    expect((await h.get().expect(200)).body.items.map((s: { filter: unknown }) => s.filter)).toEqual([
      '#work & !completed',
      null,
    ]);
    expect((await h.patch(made.body.id, { description: 'kept' }).expect(200)).body.filter).toBe('#work & !completed');
    expect((await h.patch(made.body.id, { filter: 'PRIORITY: high' }).expect(200)).body.filter).toBe('PRIORITY: high');
    expect((await h.patch(made.body.id, { filter: null }).expect(200)).body.filter).toBeNull();
    expect((await h.get(made.body.id).expect(200)).body.filter).toBeNull();
  });

  it('answers 400 validation_failed at /filter with the position for unreadable text, on create and PATCH, and changes nothing', async () => {
    const c = await t.caller();
    const h = hooks(c);
    const bad = await h.post({ url: receiver.url, events: ['task.created'], filter: '#work & (today' }).expect(400);
    expect(bad.body.error.code).toBe('validation_failed');
    expect(bad.body.error.details).toEqual([
      { path: '/filter', message: "at position 15: expected ')' to close the '(' at position 9" },
    ]);
    expect((await h.get().expect(200)).body.items).toHaveLength(0);
    const sub = (await h.post({ url: receiver.url, events: ['task.created'], filter: 'today' }).expect(201)).body;
    const patched = await h.patch(sub.id, { filter: 'priority: urgent' }).expect(400);
    expect(patched.body.error.details[0]).toMatchObject({
      path: '/filter',
      message: expect.stringMatching(/^at position 11: /),
    });
    for (const filter of ['', 'x'.repeat(1001), 42])
      expect((await h.patch(sub.id, { filter }).expect(400)).body.error.details[0].path).toBe('/filter');
    expect((await h.get(sub.id).expect(200)).body.filter).toBe('today');
  });

  it('delivers an event only when its task matches; a non-matching one is never sent, not even by a replay; a PATCH applies to later events', async () => {
    const c = await t.caller();
    const h = hooks(c);
    const sub = (
      await h
        .post({ url: receiver.url, events: ['task.created', 'task.updated', 'task.deleted'], filter: '#work' })
        .expect(201)
    ).body;
    const a = await createTask(t, c, { title: 'a', tags: ['work'] });
    await createTask(t, c, { title: 'b', tags: ['home'] });
    await createTask(t, c, { title: 'c', tags: ['work', 'home'] });
    await edit(c, a.id, { title: 'a2', tags: ['home'] });
    await t.http().delete(`/api/v1/tasks/${a.id}`).set('Authorization', c.auth).expect(200);
    await receiver.waitFor((all) => all.length >= 2);
    await sleep(600);
    expect(titles()).toEqual(['a', 'c']);
    const states = await sql<{ type: string; state: string }>`select type, state from webhook_deliveries
      where subscription_id = ${sub.id} order by seq`.execute(t.db);
    expect(states.rows.map((r) => r.state)).toEqual(['delivered', 'skipped', 'delivered', 'skipped', 'skipped']);

    await h.patch(sub.id, { filter: '#home' }).expect(200);
    await createTask(t, c, { title: 'd', tags: ['home'] });
    await createTask(t, c, { title: 'e', tags: ['work'] });
    await receiver.waitFor((all) => all.length >= 3);
    await sleep(600);
    expect(titles()).toEqual(['a', 'c', 'd']);

    // A replay judges each kept event again, by the filter it has now: the `#home` ones only.
    const replayed = await t
      .http()
      .post(`/api/v1/webhooks/${sub.id}/replay`)
      .set('Authorization', c.auth)
      .send({ since: new Date(Date.now() - 60_000).toISOString() })
      .expect(202);
    expect(replayed.body.replayed).toBe(7);
    await receiver.waitFor((all) => all.length >= 8);
    await sleep(600);
    expect(titles()).toEqual(['a', 'c', 'd', 'b', 'c', 'a2', 'a2', 'd']);
  });

  it("judges the dates in the subscriber account's zone at the event's time", async () => {
    const c = await t.caller();
    const h = hooks(c);
    // The first instant of 2030-01-01 in Kiritimati (UTC+14) is 2029-12-31T10:00Z.
    await t.db.updateTable('accounts').set({ timezone: 'Pacific/Kiritimati' }).where('id', '=', c.accountId).execute();
    const sub = (
      await h
        .post({
          url: receiver.url,
          events: ['task.created', 'task.updated'],
          filter: 'due after: 2029-06-01 & due before: 2030-01-01 | overdue',
        })
        .expect(201)
    ).body;
    await createTask(t, c, { title: 'early', dueAt: '2029-12-31T09:59:59Z' });
    await createTask(t, c, { title: 'late', dueAt: '2029-12-31T12:00:00Z' });
    // Not overdue at its creation; overdue by its edit.
    const soon = await createTask(t, c, { title: 'soon', dueAt: new Date(Date.now() + 1500).toISOString() });
    await sleep(2000);
    await edit(c, soon.id, { title: 'soon, now overdue' });
    await receiver.waitFor((all) => all.length >= 2);
    await sleep(600);
    expect(titles()).toEqual(['early', 'soon, now overdue']);
    // Replayed now, when `soon` is overdue, its creation is still judged at its own time: not sent.
    await t
      .http()
      .post(`/api/v1/webhooks/${sub.id}/replay`)
      .set('Authorization', c.auth)
      .send({ since: new Date(Date.now() - 60_000).toISOString() })
      .expect(202);
    await receiver.waitFor((all) => all.length >= 4);
    await sleep(600);
    expect(titles()).toEqual(['early', 'soon, now overdue', 'early', 'soon, now overdue']);

    // In UTC the same filter takes the late one too.
    const u = await t.caller();
    const other = await startReceiver();
    try {
      await hooks(u)
        .post({ url: other.url, events: ['task.created'], filter: 'due before: 2030-01-01' })
        .expect(201);
      await createTask(t, u, { title: 'late', dueAt: '2029-12-31T12:00:00Z' });
      await other.waitFor((all) => all.length >= 1);
      expect(other.received.map((r) => r.event.data.title)).toEqual(['late']);
    } finally {
      await other.close();
    }
  });

  it('judges reminder.fired by the task it carries', async () => {
    const c = await t.caller();
    await hooks(c)
      .post({ url: receiver.url, events: ['reminder.fired'], filter: 'priority: high' })
      .expect(201);
    const dueAt = new Date(Date.now() + 3_600_000).toISOString();
    for (const [title, priority] of [
      ['urgent', 'high'],
      ['later', 'low'],
    ] as const) {
      const task = await createTask(t, c, { title, priority, dueAt });
      await t
        .http()
        .post(`/api/v1/tasks/${task.id}/reminders`)
        .set('Authorization', c.auth)
        .send({ at: new Date(Date.now() + 1000).toISOString() })
        .expect(201);
    }
    await receiver.waitFor((all) => all.length >= 1, 8000);
    await sleep(2500);
    expect(receiver.received.map((r) => [r.event.type, r.event.data.task.title])).toEqual([
      ['reminder.fired', 'urgent'],
    ]);
  });
});
