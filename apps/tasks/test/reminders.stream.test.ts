import type { AddressInfo } from 'node:net';
import { openEventStream, type OpenedStream } from '@app/devstack';
import { createTask } from './helpers/factories.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

/*
 * DESIGN.md "Reminders": at firesAt the service emits reminder.fired "to webhook subscriptions of
 * that event and on the tasks stream"; "Due events": task.due at an open task's dueAt. The streams
 * are held by one instance, the queue's jobs run in another (the worker), so the events travel
 * through Postgres NOTIFY as they would between replicas.
 */
const ENV = { RATE_LIMIT_PER_MINUTE: '100000', STREAM_KEEPALIVE_MS: '300' };

let api: TestApp;
let worker: TestApp;
const opened: OpenedStream[] = [];

beforeAll(async () => {
  api = await startTestApp(ENV);
  worker = await startTestApp(ENV, { shareWith: api, webhooks: true });
});
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});
afterAll(async () => {
  await worker.close();
  await api.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

/** An open stream of `c`'s tasks on the API instance (past its `: stream open`). */
async function stream(c: Caller): Promise<OpenedStream> {
  const origin = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  const s = await openEventStream(`${origin}/api/v1/tasks/changes/stream`, { Authorization: c.auth });
  opened.push(s);
  expect(s.status).toBe(200);
  await s.until((x) => x.blocks.some((b) => b.comment === 'stream open'));
  return s;
}

const named = (s: OpenedStream, event: string) => s.blocks.filter((b) => b.event === event);

describe('reminder.fired and task.due on the tasks stream', () => {
  it("arrive once, at their time, on every open stream of the task's account and on no other", async () => {
    const [owner, other] = [await api.caller(), await api.caller()];
    const [first, second, stranger] = [await stream(owner), await stream(owner), await stream(other)];
    const dueAt = inMs(3_000);
    const task = await createTask(api, owner, { dueAt });
    const reminder = (
      await api
        .http()
        .post(`/api/v1/tasks/${task.id}/reminders`)
        .set('Authorization', owner.auth)
        .send({ at: inMs(2_000) })
        .expect(201)
    ).body;
    for (const s of [first, second])
      await s.until((x) => named(x, 'reminder.fired').length > 0 && named(x, 'task.due').length > 0, 8_000);
    await sleep(1_500);
    const listed = await api.http().get(`/api/v1/tasks/${task.id}/reminders`).set('Authorization', owner.auth);
    for (const s of [first, second]) {
      const [fired, ...again] = named(s, 'reminder.fired');
      expect(again).toEqual([]);
      expect(fired!.id).toBeUndefined();
      expect(JSON.parse(fired!.data!)).toEqual({ reminder: listed.body.items[0], task });
      expect(fired!.at - Date.parse(reminder.firesAt)).toBeGreaterThanOrEqual(0);
      expect(fired!.at - Date.parse(reminder.firesAt)).toBeLessThan(2_000);
      const [due, ...dueAgain] = named(s, 'task.due');
      expect(dueAgain).toEqual([]);
      expect(due!.id).toBeUndefined();
      expect(JSON.parse(due!.data!)).toEqual(task);
      expect(due!.at - Date.parse(dueAt)).toBeGreaterThanOrEqual(0);
      expect(due!.at - Date.parse(dueAt)).toBeLessThan(2_000);
    }
    expect(listed.body.items[0].firedAt).not.toBeNull();
    expect(stranger.blocks.filter((b) => b.event !== undefined)).toEqual([]);
  });

  it('leaves the Last-Event-ID of the stream its last change: a resume sends neither event again', async () => {
    const c = await api.caller();
    const s = await stream(c);
    const task = await createTask(api, c, { dueAt: inMs(3_600_000) });
    await api
      .http()
      .post(`/api/v1/tasks/${task.id}/reminders`)
      .set('Authorization', c.auth)
      .send({ at: inMs(1_000) })
      .expect(201);
    await s.until((x) => named(x, 'reminder.fired').length > 0, 6_000);
    const last = s.lastId()!;
    expect(s.changes().at(-1)!.change.id).toBe(task.id);
    s.close();
    const again = await openEventStream(
      `http://127.0.0.1:${(api.server.address() as AddressInfo).port}/api/v1/tasks/changes/stream`,
      { Authorization: c.auth, 'Last-Event-ID': last },
    );
    opened.push(again);
    expect(again.status).toBe(200);
    await sleep(1_000);
    expect(again.blocks.filter((b) => b.event !== undefined)).toEqual([]);
  });
});
