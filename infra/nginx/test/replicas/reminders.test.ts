import { startReceiver, type Receiver } from '@app/devstack';
import { startStack, STACK_START_MS, type Stack } from '../stack.js';

/**
 * DESIGN.md "Reminders" and "Due events" with two replicas: each reminder and each task's
 * `task.due` fires once, at its time (within 2 s), with both tasks instances (roles api+worker)
 * running their graphile-worker queue on one Postgres behind nginx. A relative reminder follows a
 * `dueAt` edit made through one instance when it was scheduled through the other.
 */
jest.setTimeout(60_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let stack: Stack;
let receiver: Receiver;
let auth: Record<string, string>;

beforeAll(async () => {
  stack = await startStack({ tasks: { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200' } }, { replicas: 2 });
  const { accountId } = await stack.admin('tasks', 'create-account', '--email', `replicas-${Date.now()}@example.test`);
  const { key } = await stack.admin('tasks', 'create-key', '--account', accountId);
  auth = { Authorization: `Bearer ${key as string}`, 'Content-Type': 'application/json' };
  receiver = await startReceiver();
  await call(stack.gateway, 'POST', '/api/v1/webhooks', { url: receiver.url, events: ['reminder.fired', 'task.due'] });
}, STACK_START_MS);
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

/** A write answered 2xx by `origin` (the gateway or one instance), its body. */
async function call(origin: string, method: string, path: string, body: object): Promise<Record<string, any>> {
  const res = await fetch(`${origin}${path}`, { method, headers: auth, body: JSON.stringify(body) });
  expect([path, res.status < 300 ? 'ok' : await res.text()]).toEqual([path, 'ok']);
  return (await res.json()) as Record<string, any>;
}

/** Instance `n` of tasks, bypassing nginx. */
const instance = (n: number) => `http://127.0.0.1:${stack.instances.tasks[n]!.port}`;

/** The deliveries of each of `ids` by type, after a few more seconds for a duplicate. */
async function deliveriesOf(type: string, ids: string[]): Promise<Map<string, Receiver['received']>> {
  const idOf = (r: Receiver['received'][number]) => (type === 'task.due' ? r.event.data.id : r.event.data.reminder.id);
  const of = () => {
    const by = new Map(ids.map((id) => [id, [] as Receiver['received']]));
    for (const r of receiver.received) if (r.event.type === type) by.get(idOf(r))?.push(r);
    return by;
  };
  await receiver.waitFor(() => [...of().values()].every((d) => d.length > 0), 20_000);
  await sleep(3_000);
  return of();
}

/** Every one of `by` arrived once, at or after `firesAt` and within 2 s of it; the latest lateness (ms). */
function expectOnceWithin2s(by: Map<string, Receiver['received']>, firesAt: (id: string) => number): number {
  let latest = 0;
  for (const [id, deliveries] of by) {
    expect([id, deliveries.length]).toEqual([id, 1]);
    const late = deliveries[0]!.at - firesAt(id);
    expect(late).toBeGreaterThanOrEqual(0);
    // A failure says how late, and when every delivery arrived (ms after firesAt, in order).
    const arrivals = () => receiver.received.map((r) => r.at - firesAt(id)).join(', ');
    expect([id, late < 2_000 ? 'within 2 s' : `${late} ms late; arrivals ${arrivals()}`]).toEqual([id, 'within 2 s']);
    latest = Math.max(latest, late);
  }
  return latest;
}

describe('reminders and task.due with two tasks replicas', () => {
  it('20 reminders and 4 due times, made through the gateway: each fires once, within 2 s', async () => {
    expect(stack.instances.tasks).toHaveLength(2);
    const at = new Date(Date.now() + 5_000).toISOString();
    const tasks = await Promise.all(
      [1, 2, 3, 4].map(
        async (n) => (await call(stack.gateway, 'POST', '/api/v1/tasks', { title: `due ${n}`, dueAt: at })).item,
      ),
    );
    const reminders = (
      await Promise.all(
        tasks.flatMap((task) =>
          [1, 2, 3, 4, 5].map(() => call(stack.gateway, 'POST', `/api/v1/tasks/${task.id}/reminders`, { at })),
        ),
      )
    ).map((r) => r.id as string);
    expect(Date.now()).toBeLessThan(Date.parse(at));
    const fired = await deliveriesOf('reminder.fired', reminders);
    const due = await deliveriesOf(
      'task.due',
      tasks.map((t) => t.id as string),
    );
    const latest = Math.max(
      expectOnceWithin2s(fired, () => Date.parse(at)),
      expectOnceWithin2s(due, () => Date.parse(at)),
    );
    // No webhook-id twice: no event was sent twice by the two workers.
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(receiver.received.length);
    expect(receiver.received).toHaveLength(24);
    const times = receiver.received.map((r) => r.at).sort((a, b) => a - b);
    const widestGap = Math.max(...times.slice(1).map((t, i) => t - times[i]!));
    console.log(
      `two replicas: 20 reminder.fired + 4 task.due, each once; first ${times[0]! - Date.parse(at)} ms, latest ${latest} ms after firesAt; widest gap between two arrivals ${widestGap} ms`,
    );
  });

  it('a relative reminder follows a dueAt edit made through one instance, scheduled through the other', async () => {
    const inS = (s: number) => new Date(Date.now() + s * 1000).toISOString();
    // Scheduled through instance 2: one to be moved earlier, one later.
    const [earlier, later] = await Promise.all(
      [inS(3600), inS(63)].map(async (dueAt) => {
        const task = (await call(instance(1), 'POST', '/api/v1/tasks', { title: 'moved', dueAt })).item;
        const reminder = await call(instance(1), 'POST', `/api/v1/tasks/${task.id}/reminders`, { before: 'PT1M' });
        return { task, reminder };
      }),
    );
    // Edited through instance 1: one due in an hour brought to 5 s from now, the one due in 3 s put off to 7 s.
    const moved = new Map<string, number>();
    for (const [{ task, reminder }, dueAt] of [
      [earlier!, inS(65)],
      [later!, inS(67)],
    ] as const) {
      const edited = await call(instance(0), 'PATCH', `/api/v1/tasks/${task.id}`, { dueAt });
      // The same instant (the answer drops a trailing zero of the milliseconds: .250Z is .25Z).
      expect(Date.parse(edited.item.dueAt)).toBe(Date.parse(dueAt));
      moved.set(reminder.id, Date.parse(dueAt) - 60_000);
    }
    expect(Date.now()).toBeLessThan(Date.parse(later!.reminder.firesAt));
    const fired = await deliveriesOf('reminder.fired', [...moved.keys()]);
    const latest = expectOnceWithin2s(fired, (id) => moved.get(id)!);
    for (const [id, [delivery]] of fired) expect(Date.parse(delivery!.event.data.reminder.firesAt)).toBe(moved.get(id));
    console.log(
      `dueAt edited through the other instance: each reminder once at its new firesAt; latest ${latest} ms after it`,
    );
  });
});
