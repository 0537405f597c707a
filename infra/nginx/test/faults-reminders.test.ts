import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { openEventStream, startReceiver, type OpenedStream, type Receiver } from '@app/devstack';
import { printTable } from './faults/load.js';
import { startFaultStack, type FaultStack } from './faults/stack.js';
import { allLimitsAt } from './stack.js';

/**
 * DESIGN.md "Reminders" and "Due events" across a Postgres restart (part of `npm run test:faults`
 * and `npm test`): a reminder and a task's `task.due` fire once, at their time (within 2 s), since
 * they are scheduled in Postgres (the tasks service's graphile-worker queue). The built services
 * behind nginx on a Postgres of the suite's own, stopped around the firing time: down at firesAt
 * (then they fire within 2 s of Postgres accepting connections again), or down right after the
 * scheduling and back before firesAt (then within 2 s of firesAt), or turning the queue's new
 * sessions away as it stops (then within 2 s of it being back). Each arrives once at a real
 * receiver and once on a tasks stream held through the outage, and the tasks process never exits.
 */
jest.setTimeout(60_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let stack: FaultStack;
let receiver: Receiver;
let stream: OpenedStream;
let auth: Record<string, string>;
const supervisorLog: string[] = [];
const rows: Array<Record<string, string | number>> = [];

beforeAll(async () => {
  stack = await startFaultStack({
    env: {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...allLimitsAt(1000000),
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_RETRY_BASE_MS: '200',
    },
    // As npm start runs them: a process that exits is started again (and the test sees the restart).
    supervise: { log: (line) => supervisorLog.push(line) },
  });
  const { accountId } = await stack.admin('create-account', '--email', `reminders-${randomUUID()}@example.test`);
  auth = {
    Authorization: `Bearer ${(await stack.admin('create-key', '--account', accountId)).key as string}`,
    'Content-Type': 'application/json',
  };
  receiver = await startReceiver();
  await post('/api/v1/webhooks', { url: receiver.url, events: ['reminder.fired', 'task.due'] });
  stream = await openEventStream(`${stack.gateway}/api/v1/tasks/changes/stream`, {
    Authorization: auth.Authorization!,
  });
  expect(stream.status).toBe(200);
  await stream.until((s) => s.blocks.some((b) => b.comment === 'stream open'));
});
// A test that fails with Postgres stopped starts it again, so the next test is not failed by it.
let postgresDown = false;
const stopPostgres = async (signal?: NodeJS.Signals) => {
  postgresDown = true;
  await (signal ? stack.pgServer.kill(signal) : stack.pgServer.stop());
};
const startPostgres = async () => {
  await stack.pgServer.start();
  postgresDown = false;
};
afterEach(async () => {
  if (postgresDown) await startPostgres();
});
afterAll(async () => {
  printTable(rows);
  stream?.close();
  await receiver?.close();
  await stack?.stop();
});

async function post(path: string, body: object): Promise<Record<string, any>> {
  const res = await fetch(`${stack.gateway}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
  expect([path, res.status, res.status === 201 ? '' : await res.text()]).toEqual([path, 201, '']);
  return (await res.json()) as Record<string, any>;
}

/** An open task due `inMs` ahead with a reminder at the same time. */
async function dueAhead(inMs: number): Promise<{ taskId: string; reminderId: string; firesAt: number }> {
  const at = new Date(Date.now() + inMs).toISOString();
  const task = await post('/api/v1/tasks', { title: 'remind me', dueAt: at });
  const reminder = await post(`/api/v1/tasks/${task.item.id}/reminders`, { at });
  expect(reminder.firesAt).toBe(task.item.dueAt);
  return { taskId: task.item.id, reminderId: reminder.id, firesAt: Date.parse(reminder.firesAt) };
}

/**
 * When each of the two events of `due` arrived at the receiver and on the stream, once both did
 * and a few more seconds passed for a duplicate (every list must hold one arrival).
 */
async function arrivals(due: { taskId: string; reminderId: string }): Promise<Record<string, number[]>> {
  const hooks = (type: string, id: string) =>
    receiver.received.filter(
      (r) => r.event.type === type && (type === 'task.due' ? r.event.data.id : r.event.data.reminder.id) === id,
    );
  const streamed = (type: string, id: string) =>
    stream.blocks.filter((b) => b.event === type && b.data!.includes(`"id":"${id}"`));
  await receiver.waitFor(
    () => hooks('reminder.fired', due.reminderId).length > 0 && hooks('task.due', due.taskId).length > 0,
    20_000,
  );
  await stream.until(
    () => streamed('reminder.fired', due.reminderId).length > 0 && streamed('task.due', due.taskId).length > 0,
    5_000,
  );
  await sleep(3_000);
  return {
    'reminder.fired webhook': hooks('reminder.fired', due.reminderId).map((r) => r.at),
    'task.due webhook': hooks('task.due', due.taskId).map((r) => r.at),
    'reminder.fired on the stream': streamed('reminder.fired', due.reminderId).map((b) => b.at),
    'task.due on the stream': streamed('task.due', due.taskId).map((b) => b.at),
  };
}

/**
 * Every event arrived once, within 2 s of `from` (and not before firesAt); a row of the table
 * with the lateness after firesAt and after `from`.
 */
function expectOnceWithin2s(phase: string, got: Record<string, number[]>, firesAt: number, from: number): void {
  for (const [what, at] of Object.entries(got)) {
    rows.push({
      phase,
      event: what,
      arrivals: at.length,
      'after firesAt (ms)': at[0]! - firesAt,
      'after bound (ms)': at[0]! - from,
    });
    expect([what, at.length]).toEqual([what, 1]);
    expect(at[0]!).toBeGreaterThanOrEqual(firesAt);
    expect([what, at[0]! - from < 2_000]).toEqual([what, true]);
  }
  expect(new Set(receiver.received.map((r) => r.id)).size).toBe(receiver.received.length);
}

/**
 * Restarts Postgres after a while of turning new sessions away ("the database system is shutting
 * down", cannot_connect_now), as it does for a moment in every restart, with the webhook queue's
 * sessions ended so that its next look for jobs is turned away: a smart shutdown held open by a
 * session of the test's own for `heldMs`, then a fast one and a start. Resolves when it is back.
 */
async function restartTurningSessionsAway(heldMs: number): Promise<number> {
  const held = new pg.Client({ connectionString: stack.pgServer.url });
  held.on('error', () => {});
  await held.connect();
  const stopped = stopPostgres('SIGTERM');
  for (let tries = 0; ; tries++) {
    const probe = new pg.Client({ connectionString: stack.pgServer.url });
    const refused = await probe.connect().then(
      () => probe.end().then(() => ''),
      (err: { code?: string }) => err.code ?? '',
    );
    if (refused === '57P03') break;
    expect(tries).toBeLessThan(50);
    await sleep(20);
  }
  const ended = await held.query<{ n: number }>(
    "select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where application_name = 'tasks-webhooks'",
  );
  expect(ended.rows[0]!.n).toBeGreaterThan(0);
  await sleep(heldMs);
  await stopPostgres();
  await stopped;
  await startPostgres();
  return Date.now();
}

/** The tasks process and its restarts: unchanged across a phase means nothing crashed. */
const tasksProcess = () =>
  `${stack.product.instances.tasks[0]!.process.pid} restarts ${stack.product.instances.tasks[0]!.restarts}`;

describe('reminders and task.due across a Postgres restart', () => {
  it('down at firesAt: each fires once, within 2 s of Postgres being back', async () => {
    const before = tasksProcess();
    // Stopped 2 s ahead: a fast shutdown (its checkpoint) took over 700 ms on a loaded machine.
    const due = await dueAhead(4_000);
    await sleep(due.firesAt - 2_000 - Date.now());
    await stopPostgres();
    expect(Date.now()).toBeLessThan(due.firesAt);
    await sleep(due.firesAt + 2_000 - Date.now());
    expect(receiver.received.filter((r) => JSON.stringify(r.event.data).includes(due.taskId))).toEqual([]);
    await startPostgres();
    const backAt = Date.now();
    const got = await arrivals(due);
    expectOnceWithin2s('down at firesAt (bound: Postgres back)', got, due.firesAt, backAt);
    expect(tasksProcess()).toBe(before);
    const listed = await fetch(`${stack.gateway}/api/v1/tasks/${due.taskId}/reminders`, { headers: auth });
    expect(((await listed.json()) as { items: Array<{ firedAt: string | null }> }).items[0]!.firedAt).not.toBeNull();
  });

  it('down right after scheduling and back before firesAt: each fires once, within 2 s of firesAt', async () => {
    const before = tasksProcess();
    const due = await dueAhead(7_000);
    await stopPostgres();
    await sleep(2_000);
    await startPostgres();
    expect(Date.now()).toBeLessThan(due.firesAt);
    const got = await arrivals(due);
    expectOnceWithin2s('down after scheduling, back before firesAt (bound: firesAt)', got, due.firesAt, due.firesAt);
    expect(tasksProcess()).toBe(before);
    expect(supervisorLog).toEqual([]);
  });

  // graphile-worker sleeps 1.5-4.5 s after a look for jobs that Postgres turned away: twice, since
  // a sleep short enough to end within 2 s of Postgres being back passes once in about three.
  it('Postgres turning the queue away as it restarts: each fires once, within 2 s of Postgres being back', async () => {
    const before = tasksProcess();
    for (const round of [1, 2]) {
      const due = await dueAhead(2_000);
      await sleep(due.firesAt - 500 - Date.now());
      const backAt = await restartTurningSessionsAway(300);
      const got = await arrivals(due);
      expectOnceWithin2s(`turned away, round ${round} (bound: Postgres back)`, got, due.firesAt, backAt);
    }
    expect(tasksProcess()).toBe(before);
    expect(supervisorLog).toEqual([]);
  });
});
